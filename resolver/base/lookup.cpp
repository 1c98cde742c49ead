#include "resolver/base/lookup.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

namespace glbd {
namespace {

struct Request {
    uv_getaddrinfo_t req{};
    LookupDone done;
};

}  // namespace

uv_getaddrinfo_t* lookup(uv_loop_t* loop, const std::string& name, LookupDone done) {
    auto r = std::make_unique<Request>();
    r->done = std::move(done);
    r->req.data = r.get();
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    int rc = uv_getaddrinfo(
        loop, &r->req,
        [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
            std::unique_ptr<Request> owned(static_cast<Request*>(req->data));  // from lookup(), below
            std::vector<Address> found;
            for (addrinfo* ai = status == 0 ? res : nullptr; ai; ai = ai->ai_next) {
                Address a;
                if (Address::from_sockaddr(ai->ai_addr, a) && std::find(found.begin(), found.end(), a) == found.end()) {
                    found.push_back(a);
                }
            }
            uv_freeaddrinfo(res);
            owned->done(status, found);
        },
        name.c_str(), nullptr, &hints);
    if (rc != 0) {
        r->done(rc, {});
        return nullptr;
    }
    return &r.release()->req;  // the callback above takes it back
}

void cancel_lookup(uv_getaddrinfo_t* request) {
    if (request) uv_cancel(reinterpret_cast<uv_req_t*>(request));
}

}  // namespace glbd
