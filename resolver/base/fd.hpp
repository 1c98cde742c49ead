// resolver/base/fd — a file descriptor with one owner: closed when its owner goes (a socket, a pipe, a
// file). Move-only; release() hands it on. Every descriptor glbd opens is held in one.
#pragma once

#include <unistd.h>

#include <utility>

namespace glbd {

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    [[nodiscard]] int get() const { return fd_; }
    [[nodiscard]] bool valid() const { return fd_ >= 0; }
    explicit operator bool() const { return valid(); }
    // Gives the descriptor up (the caller closes it now).
    int release() { return std::exchange(fd_, -1); }
    // Closes the one held, and holds `fd`.
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }
    // Closes it now, saying whether close() succeeded (a written file's last error shows there: errno set).
    bool close() { return ::close(release()) == 0; }

private:
    int fd_ = -1;
};

}  // namespace glbd
