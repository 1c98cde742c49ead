// conf/zone_file.cpp — zone-file text (a zone's `file` or `records`) to records, with ldns's parser.
#include <cstdio>
#include <memory>

#include "conf/reader.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/text.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::conf {

void parse_zone_text(Reader& r, const std::string& text, const std::string& path, int first_line, Zone& zone,
                     std::vector<StaticRecord>& apex_ns) {
    const std::string& origin = zone.origin;
    std::unique_ptr<FILE, int (*)(FILE*)> fp(fmemopen(const_cast<char*>(text.data()), text.size(), "r"), fclose);
    if (!fp) {
        r.error_at_line(first_line, path, "cannot read records");
        return;
    }
    ldns_rdf* origin_rdf = ldns_dname_new_frm_str((origin + ".").c_str());
    int line = 0;
    uint32_t default_ttl = zone.ttl;
    ldns_rdf* prev = nullptr;
    ldns_rdf* cur_origin = ldns_rdf_clone(origin_rdf);
    while (!feof(fp.get())) {
        ldns_rr* rr = nullptr;
        ldns_status st = ldns_rr_new_frm_fp_l(&rr, fp.get(), &default_ttl, &cur_origin, &prev, &line);
        if (st == LDNS_STATUS_SYNTAX_EMPTY || st == LDNS_STATUS_SYNTAX_TTL || st == LDNS_STATUS_SYNTAX_ORIGIN ||
            st == LDNS_STATUS_SYNTAX_INCLUDE) {
            continue;
        }
        if (st != LDNS_STATUS_OK) {
            if (feof(fp.get()) && st == LDNS_STATUS_SYNTAX_ERR) break;
            r.error_at_line(first_line + line, path, std::string("bad record: ") + ldns_get_errorstr_by_id(st));
            continue;
        }
        ldns_rr2canonical(rr);
        char* owner_c = ldns_rdf2str(ldns_rr_owner(rr));
        std::string owner_text = owner_c ? owner_c : "";
        free(owner_c);
        auto owner = wire::name_to_wire(owner_text);
        std::string owner_name = owner ? wire::wire_to_name(*owner) : owner_text;
        if (!owner || !is_subdomain(owner_name, origin)) {
            r.error_at_line(first_line + line, path, "record owner " + owner_text + " is outside the zone " + origin);
            ldns_rr_free(rr);
            continue;
        }
        if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
            r.error_at_line(first_line + line, path, "only class IN is served");
            ldns_rr_free(rr);
            continue;
        }
        ldns_buffer* buf = ldns_buffer_new(512);
        ldns_rr_rdata2buffer_wire(buf, rr);
        StaticRecord rec{*owner, static_cast<uint16_t>(ldns_rr_get_type(rr)), ldns_rr_ttl(rr),
                         std::string(reinterpret_cast<const char*>(ldns_buffer_begin(buf)), ldns_buffer_position(buf))};
        ldns_buffer_free(buf);
        if (rec.type == LDNS_RR_TYPE_SOA) {
            if (owner_name != origin) {
                r.error_at_line(first_line + line, path, "SOA must be at the zone origin");
            } else if (ldns_rr_rd_count(rr) == 7) {
                // The file's SOA gives defaults; the config's soa keys override; glbd manages the serial.
                char* mname = ldns_rdf2str(ldns_rr_rdf(rr, 0));
                char* rname = ldns_rdf2str(ldns_rr_rdf(rr, 1));
                if (zone.soa.mname.empty() && mname) zone.soa.mname = mname;
                if (rname) zone.soa.rname = rname;
                free(mname);
                free(rname);
                zone.soa.refresh = ldns_rdf2native_int32(ldns_rr_rdf(rr, 3));
                zone.soa.retry = ldns_rdf2native_int32(ldns_rr_rdf(rr, 4));
                zone.soa.expire = ldns_rdf2native_int32(ldns_rr_rdf(rr, 5));
                zone.soa.minimum = ldns_rdf2native_int32(ldns_rr_rdf(rr, 6));
            }
        } else if (rec.type == LDNS_RR_TYPE_NS && owner_name == origin) {
            apex_ns.push_back(std::move(rec));
        } else {
            zone.records.push_back(std::move(rec));
        }
        ldns_rr_free(rr);
    }
    if (prev) ldns_rdf_deep_free(prev);
    ldns_rdf_deep_free(cur_origin);
    ldns_rdf_deep_free(origin_rdf);
}

}  // namespace glbd::conf
