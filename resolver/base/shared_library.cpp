#include "resolver/base/shared_library.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace glbd {

void SharedLibrary::open() {
    std::call_once(opened_, [this] {
        // RTLD_LOCAL: its symbols stay its own; RTLD_NOW: a library that cannot bind fails here, not mid-call.
        handle_ = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
        if (handle_) return;
        const char* why = dlerror();
        error_ = why ? why : std::string(soname_) + ": cannot be opened";
        std::fprintf(stderr, "glbd: %s\n", error_.c_str());
    });
}

void* SharedLibrary::symbol(const char* name) {
    open();
    if (!handle_) return nullptr;
    void* s = dlsym(handle_, name);
    if (!s && !told_missing_.exchange(true)) std::fprintf(stderr, "glbd: %s lacks %s\n", soname_, name);
    return s;
}

const std::string& SharedLibrary::error() {
    open();
    return error_;
}

}  // namespace glbd
