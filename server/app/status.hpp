// server/app/status — the command line's view of a running server: `glbd status` and `glbd probe` read its
// admin endpoint over HTTP (libcurl) and print for a person or a probe.
#pragma once

#include <string>
#include <vector>

namespace glbd {

// The tables of `glbd status` for the JSON of /v1/state. Throws std::exception naming what is missing or
// of the wrong type (the answer of something that is not glbd, or of a different version).
std::string render_status(const std::string& admin, const std::string& state_json);
// Exit codes: 0 printed; 2 no answer, an HTTP error, or not glbd's state.
// `hosts_query`: /v1/hosts filters (prefix=, unhealthy, cluster=); `exact_host`: only that name.
int run_status(const std::string& admin, const std::string& token, const std::string& hosts_query = "",
               const std::string& exact_host = "");
// `v` for a URL's query string: everything but unreserved characters (RFC 3986) percent-encoded.
std::string query_escape(const std::string& v);
// GET url with an optional bearer token: the HTTP status (0 when there was no answer, `error` says why) and
// the body.
long http_get(const std::string& url, const std::string& token, long timeout_ms, std::string& body, std::string& error);
// The same with any method and a JSON body (PUT /v1/groups).
long http_request(const std::string& method, const std::string& url, const std::string& token,
                  const std::string& payload, long timeout_ms, std::string& body, std::string& error);

// What a failed admin request says to its user: the transport's error, or the HTTP status with the body's text,
// and for 401 what to do about GLBD_ADMIN_TOKEN (given `token`, the one sent).
std::string admin_failure(long status, const std::string& body, const std::string& error, const std::string& token);
int run_probe(const std::string& admin, const std::string& path, const std::string& token);
// `glbd explain`: /v1/explain's JSON for a person. `query` is the URL's query string (escaped).
std::string render_explain(const std::string& explain_json);
int run_explain(const std::string& admin, const std::string& query, const std::string& token);
// `glbd groups`: /v1/groups's JSON for a person (throws like render_status); run_groups shows them (`verb`
// empty) or changes them first ("set" with every active group, "add" or "remove" with one; `force`: also a
// group no cluster is in).
std::string render_groups(const std::string& groups_json);
int run_groups(const std::string& admin, const std::string& token, const std::string& verb,
               const std::vector<std::string>& names, bool force = false);
// `glbd forget`: POST /v1/forget; 0 when the server took it (it tells every peer), 2 with the reason when not.
int run_forget(const std::string& admin, const std::string& token, const std::string& origin);

}  // namespace glbd
