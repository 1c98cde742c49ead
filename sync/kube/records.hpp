// sync/kube/records — Kuadrant DNSRecords (kuadrant.io/v1alpha1) to glbd hosts, as docs/kuadrant.md
// describes. Pure functions on parsed JSON: no I/O, no threads, never throws.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "conf/config.hpp"

namespace glbd::kube {

struct Mapped {
    std::vector<conf::Host> hosts;      // this cluster's entries (several for one host when it has several geos)
    std::vector<std::string> unserved;  // "name TYPE" of endpoints glbd does not serve (TXT, NS: not yet)
    std::string error;                  // why the record could not be mapped ("" when it could)
    bool out_of_zone = false;           // not ours (not an error): its rootHost lies in none of glbd's zones, or it
                                        // is delegated, or labelled kuadrant.io/authoritative-record
};

// "namespace/name" of an object, or "" when it has none.
std::string key_of(const nlohmann::json& obj);

// Maps one DNSRecord. The load-balanced shape (H CNAME klb.H', geo CNAMEs, weighted CNAMEs, A records or an
// external host name) becomes one entry per geo: its weight, defaultGeo when geo-code=* points at it, the
// addresses of every target (or the external host names), the leaf TTL (0 or missing: 60). The simple shape
// (A/AAAA/CNAME at H without providerSpecific) becomes a simple host, and so do A/AAAA/CNAME endpoints of
// other names in glbd's zones (outside the klb chain); TXT and NS endpoints are listed as unserved, and the
// "kuadrant-" registry TXT records ignored. spec.healthCheck becomes the host's
// check with Kuadrant's defaults (HTTPS, port 443, "/", every 5 minutes, 5 failures), never for a wildcard.
Mapped map_record(const nlohmann::json& record, const std::vector<conf::Zone>& zones);

}  // namespace glbd::kube
