// resolver/base/lookup — a name's addresses looked up on a libuv loop (getaddrinfo on libuv's thread pool),
// for the threads that run a loop: health probes of host name endpoints, peers given by name.
#pragma once

#include <uv.h>

#include <functional>
#include <string>
#include <vector>

#include "resolver/base/address.hpp"

namespace glbd {

// `status` is 0 or a libuv error (UV_ECANCELED after cancel_lookup); `addresses` the distinct ones found.
using LookupDone = std::function<void(int status, const std::vector<Address>& addresses)>;

// Starts a lookup of `name`; `done` is called once, on the loop's thread. Returns the request (to cancel it),
// or null when it could not start: then `done` was called at once with the error.
uv_getaddrinfo_t* lookup(uv_loop_t* loop, const std::string& name, LookupDone done);
// Cancels a lookup not yet begun by the thread pool (a stopping loop); its `done` still runs, UV_ECANCELED.
void cancel_lookup(uv_getaddrinfo_t* request);

}  // namespace glbd
