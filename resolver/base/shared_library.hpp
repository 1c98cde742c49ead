// resolver/base/shared_library — a system library opened when a function of it is first wanted (dlopen), not
// at every start: libcurl and libsystemd were 34 of the 53 libraries glbd loaded, and half the 7.4 ms of CPU its
// start took, in a process that may never probe, watch Kubernetes or run under systemd. Thread-safe: the library
// is opened once, by whichever thread asks first; it stays open for the life of the process.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

namespace glbd {

class SharedLibrary {
public:
    // `soname`: the library's run-time name with its ABI version ("libcurl.so.4"), as the package depends on.
    explicit SharedLibrary(const char* soname) : soname_(soname) {}
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    // The library's function `name` of type `F`, or null: the library or the function missing (the first
    // failure is written to stderr, with the loader's words: a package installed without its dependency).
    template <class F>
    F* function(const char* name) {
        return reinterpret_cast<F*>(symbol(name));  // POSIX: dlsym's object pointer converts to a function's
    }
    void* symbol(const char* name);
    // Why the library cannot be opened ("" when it is open); opens it if no one has yet.
    const std::string& error();

private:
    void open();

    const char* soname_;
    std::once_flag opened_;
    void* handle_ = nullptr;                 // written once under `opened_`, read-only after it
    std::string error_;                      // likewise
    std::atomic<bool> told_missing_{false};  // a missing function was written to stderr (the first only)
};

}  // namespace glbd
