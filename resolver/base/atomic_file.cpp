#include "resolver/base/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <streambuf>
#include <vector>

#include "resolver/base/fd.hpp"

namespace glbd {
namespace {

// An ostream's buffer writing to a file descriptor, 64 KiB at a time.
class FdStreambuf : public std::streambuf {
public:
    explicit FdStreambuf(int fd) : fd_(fd), buf_(size_t{64} << 10) { setp(buf_.data(), buf_.data() + buf_.size()); }
    [[nodiscard]] bool ok() const { return ok_; }

protected:
    int_type overflow(int_type ch) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) *pptr() = traits_type::to_char_type(ch), pbump(1);
        return traits_type::not_eof(ch);
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain() {
        for (char* p = pbase(); p < pptr();) {
            ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ok_ = false;
                break;
            }
            p += n;
        }
        setp(buf_.data(), buf_.data() + buf_.size());
        return ok_;
    }
    int fd_;
    std::vector<char> buf_;
    bool ok_ = true;
};

}  // namespace

Status save_file(const std::string& dir, const std::string& name, const std::function<void(std::ostream&)>& write) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string path = dir + "/" + name, tmp = path + ".tmp";
    ::unlink(tmp.c_str());  // a leftover (or a planted link) goes; unlink never follows a link
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return Err{"cannot create " + tmp + ": " + std::strerror(errno)};
    FdStreambuf buf(fd.get());
    std::ostream out(&buf);
    write(out);
    out.flush();
    bool ok = out.good() && buf.ok() && ::fsync(fd.get()) == 0;
    ok = fd.close() && ok;
    if (!ok) {
        std::string why = "cannot write " + tmp + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return Err{why};
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) return Err{"cannot rename " + tmp + ": " + std::strerror(errno)};
    if (Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d) ::fsync(d.get());
    return glbd::ok();
}

}  // namespace glbd
