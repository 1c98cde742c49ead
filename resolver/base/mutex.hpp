// resolver/base/mutex — a mutex that clang's thread-safety analysis understands, for every lock in sync/ and
// server/. Fields a mutex guards are declared GLBD_GUARDED_BY(it) and functions that expect it held
// GLBD_REQUIRES(it): with clang and -Wthread-safety (on in the clang builds, an error there), touching
// guarded state without the lock does not compile. With GCC the annotations compile to nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define GLBD_TSA(x) __attribute__((x))
#else
#define GLBD_TSA(x)
#endif
#define GLBD_CAPABILITY(x) GLBD_TSA(capability(x))
#define GLBD_SCOPED_CAPABILITY GLBD_TSA(scoped_lockable)
#define GLBD_GUARDED_BY(m) GLBD_TSA(guarded_by(m))
#define GLBD_PT_GUARDED_BY(m) GLBD_TSA(pt_guarded_by(m))
#define GLBD_REQUIRES(...) GLBD_TSA(requires_capability(__VA_ARGS__))
#define GLBD_EXCLUDES(...) GLBD_TSA(locks_excluded(__VA_ARGS__))
#define GLBD_ACQUIRE(...) GLBD_TSA(acquire_capability(__VA_ARGS__))
#define GLBD_RELEASE(...) GLBD_TSA(release_capability(__VA_ARGS__))

namespace glbd {

class GLBD_CAPABILITY("mutex") Mutex {
public:
    void lock() GLBD_ACQUIRE() { m_.lock(); }
    void unlock() GLBD_RELEASE() { m_.unlock(); }

private:
    std::mutex m_;
};

// Holds a Mutex for its scope (std::lock_guard for Mutex, visible to the analysis).
class GLBD_SCOPED_CAPABILITY MutexLock {
public:
    explicit MutexLock(Mutex& m) GLBD_ACQUIRE(m) : m_(m) { m_.lock(); }
    ~MutexLock() GLBD_RELEASE() { m_.unlock(); }
    MutexLock(const MutexLock&) = delete;
    MutexLock& operator=(const MutexLock&) = delete;

private:
    Mutex& m_;
};

// A condition variable waited on with a Mutex held (released while waiting): the analysis sees the caller
// hold the Mutex before and after, so the condition it checks in its own loop is checked under the lock.
class CondVar {
public:
    void wait(Mutex& mu) GLBD_REQUIRES(mu) { cv_.wait(mu); }
    // False when `deadline` passed first.
    template <class Clock, class Duration>
    bool wait_until(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline) GLBD_REQUIRES(mu) {
        return cv_.wait_until(mu, deadline) == std::cv_status::no_timeout;
    }
    void notify_all() { cv_.notify_all(); }
    void notify_one() { cv_.notify_one(); }

private:
    std::condition_variable_any cv_;
};

}  // namespace glbd
