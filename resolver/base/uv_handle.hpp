// resolver/base/uv_handle — a libuv handle on the heap with one owner. libuv may touch a handle until its close
// callback has run, so the owner never deletes one: it closes it, and the callback frees it. UvHandle<H> does so
// when it goes (an owner that gives up early, on an error path); release() hands a started handle to its own
// callbacks, which end it with close_and_free(). Requests (uv_write_t) are plain std::unique_ptr: released into
// the call, taken back in the callback.
#pragma once

#include <uv.h>

#include <memory>

namespace glbd {

// Closes `h` (initialised) and frees it in its close callback; once only (a handle already closing is left).
template <class H>
void close_and_free(H* h) {
    auto* handle = reinterpret_cast<uv_handle_t*>(h);
    if (uv_is_closing(handle)) return;
    uv_close(handle, [](uv_handle_t* x) { delete reinterpret_cast<H*>(x); });
}

template <class H>
struct UvCloser {
    void operator()(H* h) const { close_and_free(h); }
};
// Holds a handle from its uv_*_init on: made with make_uv_handle<H>() and initialised at once.
template <class H>
using UvHandle = std::unique_ptr<H, UvCloser<H>>;
template <class H>
UvHandle<H> make_uv_handle() {
    return UvHandle<H>(new H{});
}

}  // namespace glbd
