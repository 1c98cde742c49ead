// glbd status — the global view from a running server's admin endpoint, as tables.
#include "server/app/status.hpp"

#include <curl/curl.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "resolver/base/curl.hpp"
#include "resolver/base/log_throttle.hpp"

namespace glbd {
namespace {

size_t collect(char* data, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
}

// What a terminal is given: a byte it would act on (a control but the line break, DEL, beyond ASCII) as \xNN,
// so a field from a peer or a DNSRecord cannot move the cursor or forge a line. (The table's cells went
// through printable() already: what is left is the lines built around them.)
std::string for_terminal(const std::string& text) {
    return escape_bytes(text, [](unsigned char c) { return (c < 0x20 && c != '\n') || c >= 0x7f; });
}

// Prints rows as left-aligned columns, each cell made printable first (so that the columns line up).
void table(std::string& out, std::vector<std::vector<std::string>> rows) {
    for (auto& r : rows) {
        for (auto& cell : r) cell = printable(cell);
    }
    std::vector<size_t> width;
    for (const auto& r : rows) {
        for (size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    }
    for (const auto& r : rows) {
        std::string line = "  ";
        for (size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
}

std::string seconds(const nlohmann::json& ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fs", ms.get<double>() / 1000.0);
    return buf;
}

std::string ago(const nlohmann::json& ms) { return ms.is_number() ? seconds(ms) + " ago" : "never"; }

// An endpoint's vantages as /v1/explain's and /v1/hosts' "outside" gives them: "c2 fails, c3 reaches (not
// counted)".
std::string vantages_text(const nlohmann::json& outside) {
    std::string text;
    for (const auto& v : outside.at("vantages")) {
        text += (text.empty() ? "" : ", ") + v.at("cluster").get<std::string>() + " " +
                v.at("verdict").get<std::string>() +
                (v.contains("cutOff")          ? " (cut off)"
                 : !v.at("counts").get<bool>() ? " (not counted)"
                                               : "");
    }
    return text.empty() ? "none" : text;
}

}  // namespace

long http_get(const std::string& url, const std::string& token, long timeout_ms, std::string& body,
              std::string& error) {
    return http_request("GET", url, token, "", timeout_ms, body, error);
}

long http_request(const std::string& method, const std::string& url, const std::string& token,
                  const std::string& payload, long timeout_ms, std::string& body, std::string& error) {
    curl::Easy easy = curl::easy();
    CURL* c = easy.get();
    if (!c) {
        error = "cannot make a libcurl handle";
        return 0;
    }
    curl::Slist headers;
    if (!token.empty()) curl::append(headers, "Authorization: Bearer " + token);
    if (method != "GET") {
        curl::append(headers, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
    }
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) error = curl_easy_strerror(rc);
    return rc == CURLE_OK ? status : 0;
}

std::string admin_failure(long status, const std::string& body, const std::string& error, const std::string& token) {
    if (status == 0) return error;
    std::string out = "HTTP " + std::to_string(status);
    std::string text = body;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (!text.empty()) out += ": " + text;
    if (status == 401) {
        out += token.empty() ? " (set GLBD_ADMIN_TOKEN to the server's admin.token)"
                             : " (GLBD_ADMIN_TOKEN is not the server's admin.token)";
    }
    return out;
}

// GET http://ADMIN/PATH; 0 when it answers 200 (container probes: `glbd probe --path /readyz`).
int run_probe(const std::string& admin, const std::string& path, const std::string& token) {
    std::string body, error, url = "http://" + admin + path;
    long status = http_get(url, token, 3000, body, error);
    if (status == 200) return 0;
    std::fprintf(stderr, "glbd probe: %s: %s\n", url.c_str(), admin_failure(status, body, error, token).c_str());
    return 1;
}

namespace {
// The zones this instance signs and each instance that publishes other keys (absent when every one agrees
// and no zone is signed).
void render_dnssec(std::string& out, const nlohmann::json& d) {
    const auto& mismatches = d.at("keyMismatches");
    if (d.at("zones").empty() && mismatches.empty()) return;
    auto id = [](const nlohmann::json& v) { return v.is_null() ? std::string("unsigned") : v.get<std::string>(); };
    std::vector<std::vector<std::string>> rows{{"ZONE", "DNSKEY (TAGS, DIGEST)", "PEERS"}};
    for (const auto& [zone, keys] : d.at("zones").items()) {
        bool agree = true;
        for (const auto& m : mismatches) agree &= m.at("zone").get<std::string>() != zone;
        rows.push_back({zone, keys.get<std::string>(), agree ? "every instance publishes the same" : ""});
    }
    for (const auto& m : mismatches) {
        rows.push_back({m.at("zone").get<std::string>(), id(m.at("theirs")),
                        "MISMATCH: " + m.at("instance").get<std::string>() + " publishes this, we " + id(m.at("ours")) +
                            (m.at("alive").get<bool>() ? "" : " (instance dead)")});
    }
    out += "\nDNSSEC\n";
    table(out, rows);
}
}  // namespace

namespace {

// A suspect peer's state: how long nothing has come from it directly now (not when it became suspect), the
// limit it went over, and whether others still relay it.
std::string suspect_text(const nlohmann::json& p) {
    const auto& direct = p.value("lastDirectMsAgo", nlohmann::json());
    const auto& limit = p.value("suspectLimitMs", nlohmann::json());
    const std::string reason = p.value("suspectReason", std::string());
    if (!limit.is_number()) return "SUSPECT: " + reason;  // an older server
    const size_t semicolon = reason.find("; ");
    return std::string("SUSPECT: ") +
           (direct.is_number() ? "nothing directly for " + seconds(direct) : std::string("never heard directly")) +
           " (limit " + seconds(limit) + ")" + (semicolon == std::string::npos ? "" : reason.substr(semicolon));
}

// The peers' table: each address, what it is heard as, its link and its state (a key mismatch first, then a
// suspicion, else ok). Nothing without peers.
void render_peers(std::string& out, const nlohmann::json& peers) {
    if (peers.empty()) return;
    out += "\nPEERS\n";
    std::vector<std::vector<std::string>> rows{
        {"ADDRESS", "ID", "UP", "LAST SEEN", "EXCHANGES", "FAILURES", "LOSS", "RTT", "STATE", "LAST ERROR"}};
    for (const auto& p : peers) {
        auto number = [&p](const char* key, double scale, const char* unit) {
            if (!p.contains(key) || !p.at(key).is_number()) return std::string("-");
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.0f%s", p.at(key).get<double>() * scale, unit);
            return std::string(buf);
        };
        rows.push_back({p.at("address").get<std::string>(), p.at("id").get<std::string>(),
                        p.at("alive").get<bool>() ? "yes" : "NO", ago(p.at("lastSeenMsAgo")), p.at("exchanges").dump(),
                        p.at("failures").dump(), number("lossRatio", 100, " %"), number("rttMs", 1, " ms"),
                        p.value("keyMismatch", false) ? "KEY MISMATCH: peers.key differs"
                        : p.value("suspect", false)   ? suspect_text(p)
                                                      : "ok",
                        p.contains("lastError") ? p.at("lastError").get<std::string>() : ""});
    }
    table(out, rows);
}

// This instance's outside probes and the fleet's verdict, in counts (with peers).
void render_outside(std::string& out, const nlohmann::json& o) {
    std::string cut;
    for (const auto& c : o.at("cutOff")) cut += (cut.empty() ? "" : ", ") + c.get<std::string>();
    char stretch[32];
    std::snprintf(stretch, sizeof stretch, "%.2f", o.at("intervalStretch").get<double>());
    out += "\nOUTSIDE HEALTH\n  probing " + o.at("targets").dump() + " endpoint(s) of other clusters" +
           (o.at("intervalStretch").get<double>() > 1 ? std::string(", intervals stretched x") + stretch : "") +
           "; the fleet's verdict: " + o.at("failed").dump() + " failed, " + o.at("kept").dump() + " kept, " +
           o.at("disputed").dump() + " failed by some vantage; vantages cut off: " + (cut.empty() ? "none" : cut) +
           "\n";
}

// The hosts listed, each cluster's entry and endpoints, and the fleet's verdict where it is more than the
// cluster's.
void render_hosts(std::string& out, const nlohmann::json& hosts) {
    out += "\nHOSTS\n";
    std::vector<std::vector<std::string>> rows{{"HOST", "CLUSTER", "GEO", "WEIGHT", "DEFAULT", "SOURCE", "ENDPOINTS"}};
    // The fleet's verdict on the endpoints listed where it is more than their cluster's (docs/answers.md).
    std::vector<std::vector<std::string>> verdicts{{"HOST", "ENDPOINT", "CLUSTER", "INSIDE", "VANTAGES", "FLEET"}};
    for (const auto& h : hosts) {
        bool first = true;
        for (const auto& e : h.at("entries")) {
            std::string eps;
            for (const auto& ep : e.at("endpoints")) {
                if (!eps.empty()) eps += ", ";
                eps += ep.at("target").get<std::string>() + (ep.at("healthy").get<bool>() ? " up" : " DOWN");
                if (!ep.at("override").is_null()) eps += " (override " + ep.at("override").get<std::string>() + ")";
                if (ep.contains("probe") && !ep.at("probe").at("healthy").get<bool>()) {
                    eps += " [" + ep.at("probe").at("reason").get<std::string>() + "]";
                }
                if (ep.contains("outside")) {
                    const auto fleet = ep.at("outside").at("fleet").get<std::string>();
                    eps += fleet == "failed" ? " (FAILED by its vantages)"
                           : fleet == "kept" ? " (kept by its vantages)"
                                             : "";
                    verdicts.push_back({h.at("name").get<std::string>(), ep.at("target").get<std::string>(),
                                        e.at("cluster").get<std::string>(),
                                        ep.at("healthy").get<bool>() ? "up" : "DOWN", vantages_text(ep.at("outside")),
                                        fleet});
                }
            }
            std::string cluster = e.at("cluster").get<std::string>() + (e.at("alive").get<bool>() ? "" : " (dead)");
            if (e.contains("entry")) cluster += " [" + e.at("entry").get<std::string>() + "]";
            rows.push_back({first ? h.at("name").get<std::string>() : "", cluster,
                            e.contains("geo") ? e.at("geo").get<std::string>() : "-",
                            e.contains("weight") ? e.at("weight").dump() : "-",
                            e.contains("defaultGeo") && e.at("defaultGeo").get<bool>() ? "yes" : "",
                            e.contains("source") ? e.at("source").get<std::string>() : "", eps});
            first = false;
        }
    }
    table(out, rows);
    if (verdicts.size() > 1) out += "\nOUTSIDE VERDICTS\n", table(out, verdicts);
}

// The Kubernetes source: its mode, whether synced, and what it made of the DNSRecords.
void render_kubernetes(std::string& out, const nlohmann::json& k) {
    const auto& r = k.at("records");
    out += "\nKUBERNETES\n" + k.at("mode").get<std::string>() + " mode" +
           (k.at("selector").get<std::string>().empty() ? "" : " (" + k.at("selector").get<std::string>() + ")") +
           ", " + (k.at("synced").get<bool>() ? "synced" : "NOT SYNCED") + "; DNSRecords: " + r.at("valid").dump() +
           " served, " + r.at("invalid").dump() + " invalid, " + r.at("otherZone").dump() +
           " for a zone this glbd does not serve" +
           (r.value("deleting", 0) ? ", " + r.at("deleting").dump() + " being deleted" : "") + "; " +
           k.at("events").dump() + " events, " + k.at("relists").dump() + " lists, " + k.at("errors").dump() +
           " errors; last event " + ago(k.at("lastEventMsAgo")) + "\n";
}

}  // namespace

std::string render_status(const std::string& admin, const std::string& state_json) {
    auto s = nlohmann::json::parse(state_json, nullptr, false);
    if (s.is_discarded()) throw std::runtime_error("not JSON");
    // Every field is read through at(): a missing one or one of the wrong type throws, never crashes.
    std::string out = "glbd " + admin + ": cluster " + s.at("cluster").get<std::string>() + ", instance " +
                      s.at("instance").get<std::string>() + ", serial " + s.at("serial").dump() + ", " +
                      (s.at("ready").get<bool>() ? "ready" : "NOT READY") + "\n";
    if (const auto& c = s.value("identityConflict", nlohmann::json()); c.is_object()) {
        out += "IDENTITY CONFLICT: another glbd runs as " + s.at("cluster").get<std::string>() + "/" +
               s.at("instance").get<std::string>() + " (" + c.at("where").get<std::string>() + ", " +
               ago(c.at("lastMsAgo")) + "): the two take turns and each one's endpoints vanish; give each its own " +
               "cluster.instance\n";
    }
    out += "\nCLUSTERS\n";
    std::vector<std::vector<std::string>> rows{{"CLUSTER", "ALIVE", "INSTANCE", "ALIVE", "LAST HEARD", "VERSION"}};
    for (const auto& cl : s.at("clusters")) {
        bool first = true;
        for (const auto& in : cl.at("instances")) {
            rows.push_back({first ? cl.at("id").get<std::string>() : "",
                            first ? (cl.at("alive").get<bool>() ? "yes" : "DEAD") : "",
                            in.at("instance").get<std::string>(), in.at("alive").get<bool>() ? "yes" : "DEAD",
                            in.at("self").get<bool>() ? "(this instance)" : ago(in.at("lastHeardMsAgo")),
                            in.at("version").dump()});
            first = false;
        }
    }
    table(out, rows);
    render_peers(out, s.at("peers"));
    if (s.contains("outside")) render_outside(out, s.at("outside"));
    if (s.contains("dnssec")) render_dnssec(out, s.at("dnssec"));
    render_hosts(out, s.at("hosts"));
    if (s.contains("kubernetes")) render_kubernetes(out, s.at("kubernetes"));
    return for_terminal(out);
}

std::string query_escape(const std::string& v) {
    std::string out;
    for (unsigned char c : v) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

// The summary, then the hosts asked for (`hosts_query`: /v1/hosts filters; empty: every host when there are
// at most kListAll, else none and a line saying how to ask), page by page, at most kMaxHosts of them.
int run_status(const std::string& admin, const std::string& token, const std::string& hosts_query,
               const std::string& exact_host) {
    constexpr size_t kListAll = 50, kMaxHosts = 10000;
    std::string url = "http://" + admin + "/v1/summary";
    auto get = [&](const std::string& u, nlohmann::json& out) {
        std::string body, error;
        long status = http_get(u, token, 5000, body, error);
        if (status != 200) {
            std::fprintf(stderr, "glbd status: cannot read %s: %s\n", u.c_str(),
                         admin_failure(status, body, error, token).c_str());
            return false;
        }
        out = nlohmann::json::parse(body, nullptr, false);
        if (out.is_discarded() || !out.is_object()) {
            std::fprintf(stderr, "glbd status: %s did not answer JSON\n", u.c_str());
            return false;
        }
        return true;
    };
    nlohmann::json summary, page;
    if (!get(url, summary)) return 2;
    try {
        size_t hosts = summary.at("counts").at("hosts").get<size_t>();
        const bool list = !hosts_query.empty() || hosts <= kListAll;
        nlohmann::json listed = nlohmann::json::array();
        for (std::string cursor; list && listed.size() < kMaxHosts;) {
            std::string u = "http://" + admin + "/v1/hosts?limit=1000" +
                            (hosts_query.empty() ? "" : "&" + hosts_query) +
                            (cursor.empty() ? "" : "&cursor=" + cursor);
            if (!get(u, page)) return 2;
            for (auto& h : page.at("hosts")) {
                if (exact_host.empty() || h.at("name").get<std::string>() == exact_host) listed.push_back(h);
            }
            if (page.at("next").is_null()) break;
            cursor = query_escape(page.at("next").get<std::string>());
        }
        summary["hosts"] = listed;
        std::string out = render_status(admin, summary.dump());
        if (!list) {
            out += "  (" + std::to_string(hosts) +
                   " hosts: ask for some with --host NAME, --prefix P, --unhealthy or --cluster ID)\n";
        }
        std::fputs(out.c_str(), stdout);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "glbd status: %s did not answer glbd's summary and hosts: %s\n", admin.c_str(), e.what());
        return 2;
    }
    return 0;
}

std::string render_explain(const std::string& explain_json) {
    auto j = nlohmann::json::parse(explain_json);
    std::string out = j.at("name").get<std::string>() + " " + j.at("type").get<std::string>();
    if (j.contains("subnet"))
        out += " for a client in " + j["subnet"].get<std::string>();
    else if (j.contains("client"))
        out += " for client " + j["client"].get<std::string>();
    out += " (serial " + std::to_string(j.at("serial").get<uint64_t>()) + ")\n";
    for (const auto& c : j.value("cnames", nlohmann::json::array())) out += "  via " + c.get<std::string>() + "\n";
    if (j.contains("error")) return out + "  " + j["error"].get<std::string>() + "\n";
    out += "  host " + j.at("host").get<std::string>() + " in zone " + j.at("zone").get<std::string>() +
           (j.at("loadBalanced").get<bool>() ? ", load-balanced\n" : ", simple (every cluster)\n");
    if (const auto& loc = j.at("location"); !loc.is_null()) {
        out += "  located in " +
               (loc.at("country").get<std::string>().empty() ? std::string("(unknown)")
                                                             : loc["country"].get<std::string>()) +
               (loc.at("continent").get<std::string>().empty() ? ""
                                                               : ", continent " + loc["continent"].get<std::string>()) +
               " by " + loc.at("from").get<std::string>() + " (network /" +
               std::to_string(loc.at("prefix").get<int>()) + ")\n";
    }
    std::vector<std::vector<std::string>> steps{{"GROUP", "GEO", "RESULT"}};
    for (const auto& s : j.at("steps")) {
        std::string group = s.at("group").get<std::string>();
        if (s.contains("km")) group += " (" + std::to_string(s["km"].get<long>()) + " km)";
        steps.push_back({group, s.at("geo").get<std::string>(), s.at("result").get<std::string>()});
    }
    table(out, steps);
    std::vector<std::vector<std::string>> cands{{"CLUSTER", "GEO", "WEIGHT", "USABLE", "ENDPOINTS"}};
    for (const auto& c : j.at("candidates")) {
        std::string eps;
        for (const auto& e : c.at("endpoints"))
            eps += (eps.empty() ? "" : " ") + e.at("target").get<std::string>() +
                   (e.at("healthy").get<bool>() ? "" : "(down)");
        cands.push_back({c.at("cluster").get<std::string>() +
                             (c.contains("entry") ? " [" + c.at("entry").get<std::string>() + "]" : ""),
                         c.at("geo").get<std::string>(), std::to_string(c.at("weight").get<int>()),
                         c.at("usable").get<bool>()                             ? "yes"
                         : c.contains("standby") && c.at("standby").get<bool>() ? "no (group standing by)"
                                                                                : "no",
                         eps});
    }
    out += "\n";
    table(out, cands);
    // The fleet's verdict on each endpoint where it is more than its cluster's (failed or kept by its
    // vantages, or some vantage failing it); /v1/explain has every endpoint's (docs/answers.md).
    std::vector<std::vector<std::string>> fleet{{"ENDPOINT", "CLUSTER", "VANTAGES", "FLEET"}};
    for (const auto& c : j.at("candidates")) {
        for (const auto& e : c.at("endpoints")) {
            if (!e.contains("outside") || e["outside"].at("vantages").empty()) continue;
            bool matters = e["outside"].at("fleet").get<std::string>() != "as its cluster says";
            for (const auto& v : e["outside"]["vantages"]) matters |= v.at("verdict").get<std::string>() == "fails";
            if (!matters) continue;
            fleet.push_back({e.at("target").get<std::string>(), e["outside"].at("cluster").get<std::string>(),
                             vantages_text(e["outside"]), e["outside"].at("fleet").get<std::string>()});
        }
    }
    if (fleet.size() > 1) out += "\n", table(out, fleet);
    const auto& a = j.at("answer");
    std::string records;
    for (const auto& rec : a.at("records")) records += (records.empty() ? "" : ", ") + rec.get<std::string>();
    out += "\n  answer now: " + a.at("rcode").get<std::string>() + (records.empty() ? "" : ": " + records) + ", TTL " +
           std::to_string(a.at("ttl").get<int>()) +
           (j.contains("subnet") ? ", ECS scope /" + std::to_string(a.at("ecsScope").get<int>()) : "") +
           (j.at("fallback").get<bool>() ? " (fallback)" : "") + (j.at("failOpen").get<bool>() ? " (fail-open)" : "") +
           "\n";
    return for_terminal(out);
}

int run_explain(const std::string& admin, const std::string& query, const std::string& token) {
    std::string body, error, url = "http://" + admin + "/v1/explain?" + query;
    long status = http_get(url, token, 5000, body, error);
    if (status != 200) {
        std::fprintf(stderr, "glbd explain: %s: %s\n", url.c_str(), admin_failure(status, body, error, token).c_str());
        return 2;
    }
    try {
        std::fputs(render_explain(body).c_str(), stdout);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "glbd explain: %s did not answer an explanation: %s\n", url.c_str(), e.what());
        return 2;
    }
    return 0;
}

std::string render_groups(const std::string& groups_json) {
    auto j = nlohmann::json::parse(groups_json);
    std::string out;
    if (j.at("active").is_null()) {
        out += "active groups: none set (every group is active)\n";
    } else {
        std::string list;
        for (const auto& g : j.at("active")) list += (list.empty() ? "" : ", ") + g.get<std::string>();
        out += "active groups: " + (list.empty() ? std::string("none") : list) + "\n";
        if (j.value("pinned", false)) {
            out += "set by:        the admin API (glbd groups set); glbd groups clear hands them back to the records\n";
            out += "served as:     kuadrant-active-groups.<zone> TXT \"" + j.at("record").get<std::string>() + "\"\n";
        }
        for (const auto& r : j.value("records", nlohmann::json::array())) {
            out += "groups record: cluster " + r.at("cluster").get<std::string>() + ": \"" +
                   r.at("text").get<std::string>() + "\"" +
                   (j.value("pinned", false) ? " (not in force while the admin's set holds)" : "") + "\n";
        }
    }
    std::vector<std::vector<std::string>> rows{{"CLUSTER", "GROUP", "ANSWERS"}};
    for (const auto& c : j.at("clusters")) {
        rows.push_back({c.at("id").get<std::string>(), c.at("group").is_null() ? "-" : c.at("group").get<std::string>(),
                        c.at("standby").get<bool>() ? "standing by" : "active"});
    }
    table(out, rows);
    for (const auto& g : j.value("unmatched", nlohmann::json::array())) {
        out += "warning: no cluster is in the active group \"" + g.get<std::string>() +
               "\" (a typo? clusters name theirs in kubernetes.group or their records' status)\n";
    }
    return for_terminal(out);
}

int run_groups(const std::string& admin, const std::string& token, const std::string& verb,
               const std::vector<std::string>& names, bool force) {
    std::string url = "http://" + admin + "/v1/groups", body, error;
    long status = 0;
    if (verb.empty()) {
        status = http_get(url, token, 5000, body, error);
    } else {
        nlohmann::json req = verb == "set"     ? nlohmann::json{{"active", names}}
                             : verb == "clear" ? nlohmann::json{{"clear", true}}
                                               : nlohmann::json{{verb, names.at(0)}};
        if (force) req["force"] = true;
        status = http_request("PUT", url, token, req.dump(), 5000, body, error);
    }
    if (status != 200) {
        std::fprintf(stderr, "glbd groups: %s: %s\n", url.c_str(), admin_failure(status, body, error, token).c_str());
        return 2;
    }
    try {
        std::fputs(render_groups(body).c_str(), stdout);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "glbd groups: %s did not answer glbd's groups: %s\n", admin.c_str(), e.what());
        return 2;
    }
    return 0;
}

int run_forget(const std::string& admin, const std::string& token, const std::string& origin) {
    const std::string url = "http://" + admin + "/v1/forget";
    std::string body, error;
    const long status =
        http_request("POST", url, token, nlohmann::json{{"instance", origin}}.dump(), 5000, body, error);
    if (status != 200) {
        std::fprintf(stderr, "glbd forget: %s: %s\n", url.c_str(), admin_failure(status, body, error, token).c_str());
        return 2;
    }
    std::printf("forgot %s: every peer forgets it with %s's next report; it comes back if it speaks again\n",
                origin.c_str(), admin.c_str());
    return 0;
}

}  // namespace glbd
