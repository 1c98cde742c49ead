// resolver/model/names — the rules for the names glbd accepts, shared by the config reader, the Kubernetes
// mapping and sync, which checks a peer's report against the same rules before it enters the store. Pure
// functions; any thread.
#pragma once

#include <string>
#include <string_view>

namespace glbd::model {

// cluster.id: 1..63 characters of [a-z0-9-].
bool is_cluster_id(std::string_view s);
// cluster.instance (a host or pod name): 1..253 characters of [A-Za-z0-9._-].
bool is_instance_name(std::string_view s);
// Letters, digits, '-' and '_' in each label (a trailing dot allowed), and a last label that is not all
// digits (so that "192.0.2.300" is a bad address, not a name).
bool is_host_name(std::string_view s);
// A load-balanced host as glbd holds it: a valid name in lower case without the trailing dot, with '*' only
// as a whole first label.
bool is_lb_host_name(std::string_view s);
// An endpoint as glbd holds it: an IP address, or a host name in lower case without the trailing dot.
bool is_endpoint(std::string_view s);
// A failover group's name as dns-operator's --group takes it: 1..16 bytes, none of ';', '&', ',', ' ', '"',
// '\'' (its TXT record's separators and quotes); glbd also refuses '=' (which would break the record's
// "groups=" pair) and anything but printable ASCII.
bool is_group_name(std::string_view s);
// Why a host at a zone's apex has addresses only: a host name endpoint is answered as a CNAME, and a CNAME
// cannot sit beside the apex's SOA and NS.
constexpr const char* kApexCname =
    "a host at the zone apex takes IP addresses only (a host name would be answered as a CNAME, which cannot sit "
    "beside the apex's SOA and NS: RFC 1034 section 3.6.2)";
// The TXT record dns-operator reads a zone's active failover groups from: "kuadrant-active-groups.<origin>".
std::string active_groups_name(std::string_view zone_origin);
// A geo code of geoip.networks: 1..32 characters of [A-Za-z0-9_-].
bool is_custom_geo_code(std::string_view s);
// A health check's path (and query): starts with "/" or "?" (so that it can never name another host or
// port), printable ASCII without spaces, at most 2048 bytes.
bool is_probe_path(std::string_view s);
// `name` equals `origin` or lies below it (both lower case, no trailing dot).
bool is_subdomain(std::string_view name, std::string_view origin);
// An API server URL glbd may send a bearer token to: https://, or http:// to a loopback host (an address in
// 127.0.0.0/8 or ::1, or "localhost", compared whole: not a prefix of another name), for tests.
bool is_api_server_url(std::string_view url);
// Whether `s` is a name's canonical text, the one wire::wire_to_name(wire::name_to_wire(s)) gives back: lower
// case, no trailing dot, labels of 1 to 63 printable bytes (no space, backslash or quote), at most 253 bytes.
bool is_canonical_name(std::string_view s);
// A name as glbd holds it: lower case (ASCII), without the trailing dot. Not checked.
std::string canonical_name(std::string name);

}  // namespace glbd::model
