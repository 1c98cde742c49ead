#include "resolver/base/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include "resolver/base/fd.hpp"

namespace glbd {

Result<std::string> read_file(const std::string& path, size_t max_bytes, bool* missing) {
    if (missing) *missing = false;
    // O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; a regular file's reads ignore it.
    const Fd owned(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    const int fd = owned.get();
    if (!owned) {
        if (missing) *missing = errno == ENOENT;
        return Err{std::strerror(errno)};
    }
    struct stat st {};
    std::optional<std::string> out;
    std::string error;
    if (::fstat(fd, &st) != 0) {
        error = std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        error = "not a regular file";
    } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
        error = "larger than " + std::to_string(max_bytes) + " bytes";
    } else {
        // Sized by fstat, and read to the end: a file that grew meanwhile is still read whole, or refused.
        std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
        size_t have = 0;
        for (;;) {
            if (have == text.size()) {
                if (have > max_bytes) break;
                text.resize(std::min(max_bytes + 1, text.size() * 2 + 4096));
            }
            ssize_t n = ::read(fd, text.data() + have, text.size() - have);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                error = std::strerror(errno);
                break;
            }
            if (n == 0) {
                text.resize(have);
                out = std::move(text);
                break;
            }
            have += static_cast<size_t>(n);
        }
        if (!out && error.empty()) error = "larger than " + std::to_string(max_bytes) + " bytes";
    }
    if (!out) return Err{error};
    return std::move(*out);
}

std::optional<std::string> open_to_everyone(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IROTH | S_IWOTH)) == 0) return std::nullopt;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string(mode);
}

}  // namespace glbd
