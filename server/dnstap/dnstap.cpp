#include "server/dnstap/dnstap.hpp"

#include <fcntl.h>
#include <fstrm.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "dnstap.pb-c.h"
#include "resolver/base/clock.hpp"
#include "resolver/base/fd.hpp"
#include "resolver/base/log_throttle.hpp"
#include "resolver/base/thread_name.hpp"

namespace glbd::dnstap {

namespace {

constexpr char kContentType[] = "protobuf:dnstap.Dnstap";
constexpr int kSocketTimeoutMs = 2000;  // a reader that stalls: the handshake or a write gives up after this
constexpr size_t kBatch = 256;          // frames per write (libfstrm makes it one writev of 512 iovecs)
constexpr std::chrono::milliseconds kFirstBackoff{100}, kMaxBackoff{5000};

ProtobufCBinaryData bytes(const void* p, size_t n) {
    return ProtobufCBinaryData{n, static_cast<uint8_t*>(const_cast<void*>(p))};
}

// Fills `d` and `m` (which point into `x` and `o`: they must outlive the packing).
void fill(const Options& o, const Exchange& x, bool response, Dnstap__Dnstap& d, Dnstap__Message& m) {
    d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
    d.message = &m;
    if (!o.identity.empty()) d.has_identity = 1, d.identity = bytes(o.identity.data(), o.identity.size());
    if (!o.version.empty()) d.has_version = 1, d.version = bytes(o.version.data(), o.version.size());
    if (response && !x.extra.empty()) d.has_extra = 1, d.extra = bytes(x.extra.data(), x.extra.size());
    m.type = response ? DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE : DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
    const bool v6 = x.client.address.family == 6;
    m.has_socket_family = 1, m.socket_family = v6 ? DNSTAP__SOCKET_FAMILY__INET6 : DNSTAP__SOCKET_FAMILY__INET;
    m.has_socket_protocol = 1;
    m.socket_protocol = x.tcp ? DNSTAP__SOCKET_PROTOCOL__TCP : DNSTAP__SOCKET_PROTOCOL__UDP;
    const size_t alen = v6 ? 16 : 4;
    m.has_query_address = 1, m.query_address = bytes(x.client.address.bytes.data(), alen);
    m.has_query_port = 1, m.query_port = x.client.port;
    if (x.server.address.family == x.client.address.family) {
        m.has_response_address = 1, m.response_address = bytes(x.server.address.bytes.data(), alen);
        m.has_response_port = 1, m.response_port = x.server.port;
    }
    m.has_query_time_sec = 1, m.query_time_sec = static_cast<uint64_t>(x.query_time.tv_sec);
    m.has_query_time_nsec = 1, m.query_time_nsec = static_cast<uint32_t>(x.query_time.tv_nsec);
    if (!response) {
        m.has_query_message = 1, m.query_message = bytes(x.query, x.query_len);
        return;
    }
    m.has_response_time_sec = 1, m.response_time_sec = static_cast<uint64_t>(x.response_time.tv_sec);
    m.has_response_time_nsec = 1, m.response_time_nsec = static_cast<uint32_t>(x.response_time.tv_nsec);
    m.has_response_message = 1, m.response_message = bytes(x.response, x.response_len);
}

// The transport to a Unix socket (libfstrm's own lacks timeouts: a reader that stops reading, or never answers
// the handshake, would hold the writer thread, and glbd's stop, for ever) or to a file. The file is made here,
// not by libfstrm: mode 0640 (it holds every client's address and question), any "other" bits of one that
// exists taken away, and only a regular file (opened without waiting: a FIFO with no reader, or a device, is
// refused, and nothing can block the stop).
struct UnixTransport {
    std::string path;
    Fd fd;
    bool file = false;
    std::string* why = nullptr;  // the last failure to open, for the log

    static fstrm_res open(void* obj) {
        auto* t = static_cast<UnixTransport*>(obj);
        close(obj);
        if (t->file) return open_file(*t);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::memcpy(sa.sun_path, t->path.c_str(), t->path.size() + 1);  // length checked by Sink
        t->fd.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (!t->fd) return fstrm_res_failure;
        timeval tv{kSocketTimeoutMs / 1000, static_cast<suseconds_t>(kSocketTimeoutMs % 1000) * 1000};
        setsockopt(t->fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(t->fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (::connect(t->fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
            close(obj);
            return fstrm_res_failure;
        }
        return fstrm_res_success;
    }
    static fstrm_res open_file(UnixTransport& t) {
        t.fd.reset(::open(t.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0640));
        const int open_error = errno;
        struct stat st {};
        const bool known = t.fd ? ::fstat(t.fd.get(), &st) == 0 : ::stat(t.path.c_str(), &st) == 0;
        if (known && !S_ISREG(st.st_mode)) {  // (a FIFO with no reader does not open: ENXIO)
            if (t.why) *t.why = "not a regular file (a FIFO or a device is not a dnstap file)";
            t.fd.reset();
            return fstrm_res_failure;
        }
        if (!t.fd || !known) {
            if (t.why) *t.why = std::strerror(t.fd ? errno : open_error);
            t.fd.reset();
            return fstrm_res_failure;
        }
        if ((st.st_mode & S_IRWXO) != 0) ::fchmod(t.fd.get(), st.st_mode & 0770);
        ::fcntl(t.fd.get(), F_SETFL, ::fcntl(t.fd.get(), F_GETFL) & ~O_NONBLOCK);
        return fstrm_res_success;
    }
    static fstrm_res close(void* obj) {
        static_cast<UnixTransport*>(obj)->fd.reset();
        return fstrm_res_success;
    }
    static fstrm_res read(void* obj, void* data, size_t count) {
        auto* t = static_cast<UnixTransport*>(obj);
        auto* p = static_cast<uint8_t*>(data);
        while (count > 0 && t->fd) {
            ssize_t n = ::read(t->fd.get(), p, count);
            if (n < 0 && errno == EINTR) continue;
            if (n == 0) return fstrm_res_stop;
            if (n < 0) return fstrm_res_failure;
            p += n, count -= static_cast<size_t>(n);
        }
        return count == 0 ? fstrm_res_success : fstrm_res_failure;
    }
    static fstrm_res write(void* obj, const struct iovec* iov, int iovcnt) {
        auto* t = static_cast<UnixTransport*>(obj);
        std::vector<iovec> left(iov, iov + iovcnt);
        size_t at = 0;
        while (at < left.size() && t->fd) {
            msghdr msg{};
            msg.msg_iov = &left[at];
            msg.msg_iovlen = left.size() - at;
            ssize_t n = t->file ? ::writev(t->fd.get(), msg.msg_iov, static_cast<int>(msg.msg_iovlen))
                                : ::sendmsg(t->fd.get(), &msg, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return fstrm_res_failure;
            auto sent = static_cast<size_t>(n);
            while (at < left.size() && sent >= left[at].iov_len) sent -= left[at++].iov_len;
            if (at < left.size()) {
                left[at].iov_base = static_cast<uint8_t*>(left[at].iov_base) + sent;
                left[at].iov_len -= sent;
            }
        }
        return at == left.size() ? fstrm_res_success : fstrm_res_failure;
    }
    static fstrm_res destroy(void* obj) {
        std::unique_ptr<UnixTransport> owned(static_cast<UnixTransport*>(obj));  // fstrm hands it back to free
        close(obj);
        return fstrm_res_success;
    }
};

}  // namespace

std::vector<uint8_t> encode(const Options& o, const Exchange& x, bool response) {
    Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    fill(o, x, response, d, m);
    std::vector<uint8_t> out(dnstap__dnstap__get_packed_size(&d));
    dnstap__dnstap__pack(&d, out.data());
    return out;
}

void Producer::log(const Exchange& x) {
    const Options& o = sink_.options_;
    for (bool response : {false, true}) {
        if (response ? !o.responses || !x.response : !o.queries) continue;
        Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
        Dnstap__Message m = DNSTAP__MESSAGE__INIT;
        fill(o, x, response, d, m);
        size_t n = dnstap__dnstap__get_packed_size(&d);
        auto* buf = static_cast<uint8_t*>(std::malloc(n));
        if (!buf) {
            sink_.dropped_full_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        dnstap__dnstap__pack(&d, buf);
        push(buf, n);
    }
}

void Producer::push(uint8_t* data, size_t len) {
    size_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_.load(std::memory_order_acquire) >= kCapacity) {
        std::free(data);
        sink_.dropped_full_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    ring_[h % kCapacity] = Frame{data, static_cast<uint32_t>(len)};
    head_.store(h + 1, std::memory_order_release);
}

bool Producer::pop(Frame& out) {
    size_t t = tail_.load(std::memory_order_relaxed);
    if (t == head_.load(std::memory_order_acquire)) return false;
    out = ring_[t % kCapacity];
    tail_.store(t + 1, std::memory_order_release);
    return true;
}

Sink::Sink(Options options, unsigned producers) : options_(std::move(options)) {
    if (options_.unix_socket && options_.path.size() >= sizeof(sockaddr_un::sun_path)) {
        throw std::runtime_error("dnstap: the socket path \"" + options_.path + "\" is too long");
    }
    if (options_.sample == 0) options_.sample = 1;
    for (unsigned i = 0; i < producers; ++i)
        producers_.push_back(std::unique_ptr<Producer>(new Producer(*this, options_.sample)));
}

Sink::~Sink() { stop(); }

uint64_t Sink::dropped() const {
    return dropped_unsent_.load(std::memory_order_relaxed) + dropped_full_.load(std::memory_order_relaxed);
}

void Sink::start() {
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this] {
        name_this_thread("glbd-dnstap");
        run();
    });
}

void Sink::stop() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    thread_.join();
}

bool Sink::open() {
    fstrm_writer_options* wopt = fstrm_writer_options_init();
    fstrm_writer_options_add_content_type(wopt, kContentType, sizeof kContentType - 1);
    // fstrm's: destroy() frees it. A file is written one way (no read: libfstrm sends no handshake).
    auto* t =
        std::make_unique<UnixTransport>(UnixTransport{options_.path, Fd(), !options_.unix_socket, &why_}).release();
    fstrm_rdwr* rdwr = fstrm_rdwr_init(t);
    fstrm_rdwr_set_destroy(rdwr, UnixTransport::destroy);
    fstrm_rdwr_set_open(rdwr, UnixTransport::open);
    fstrm_rdwr_set_close(rdwr, UnixTransport::close);
    if (options_.unix_socket) fstrm_rdwr_set_read(rdwr, UnixTransport::read);
    fstrm_rdwr_set_write(rdwr, UnixTransport::write);
    writer_ = fstrm_writer_init(wopt, &rdwr);
    fstrm_writer_options_destroy(&wopt);
    if (writer_ && fstrm_writer_open(writer_) == fstrm_res_success) {
        connected_ = true;
        return true;
    }
    close();
    return false;
}

// A writer is never reused after a failure (libfstrm's state machine cannot reopen one whose close failed):
// it is destroyed, which says STOP (and waits for FINISH, bounded by the socket's timeouts) when it can.
void Sink::close() {
    if (writer_) fstrm_writer_destroy(&writer_);
    writer_ = nullptr;
    connected_ = false;
}

// Takes up to kBatch frames from the queues, round robin, and writes them (or drops them, counted).
size_t Sink::drain(bool write) {
    Producer::Frame frames[kBatch];
    iovec iov[kBatch];
    size_t n = 0;
    for (bool more = true; more && n < kBatch;) {
        more = false;
        for (auto& p : producers_) {
            if (n < kBatch && p->pop(frames[n])) {
                iov[n] = iovec{frames[n].data, frames[n].len};
                ++n, more = true;
            }
        }
    }
    if (n == 0) return 0;
    if (write && writer_ && fstrm_writer_writev(writer_, iov, static_cast<int>(n)) == fstrm_res_success) {
        written_.fetch_add(n, std::memory_order_relaxed);
    } else {
        dropped_unsent_.fetch_add(n, std::memory_order_relaxed);
        uint64_t left_out = 0;
        if (write && throttle_.allow("write", steady_ms(), &left_out)) {
            spdlog::warn(
                "dnstap: writing failed (the reader went away or stopped reading); reconnecting ({} "
                "more not logged)",
                left_out);
        }
        if (write) close();
    }
    for (size_t i = 0; i < n; ++i) std::free(frames[i].data);
    return n;
}

void Sink::run() {
    using clock = std::chrono::steady_clock;
    auto backoff = kFirstBackoff;
    auto next_attempt = clock::now();
    unsigned idle = 0;  // naps since the last frame
    const std::string sink = (options_.unix_socket ? "unix:" : "") + options_.path;
    while (!stopping_.load(std::memory_order_relaxed)) {
        if (!writer_ && clock::now() >= next_attempt) {
            if (open()) {
                backoff = kFirstBackoff;
                spdlog::info("dnstap: writing to {}", printable(sink));
            } else {
                uint64_t left_out = 0;
                if (throttle_.allow("open", steady_ms(), &left_out)) {
                    spdlog::warn(
                        "dnstap: cannot open {} ({}); retrying, dropping what is logged meanwhile ({} more not "
                        "logged)",
                        printable(sink),
                        why_.empty() ? std::string("no reader, or its handshake failed") : printable(why_), left_out);
                }
                why_.clear();
                next_attempt = clock::now() + backoff;
                backoff = std::min(backoff * 2, kMaxBackoff);
            }
        }
        // Idle: a short nap while frames came lately, a longer one when quiet (a ring holds 4,096 frames: 10
        // ms of 400,000 a second).
        if (drain(writer_ != nullptr) > 0) {
            idle = 0;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(++idle < 100 ? 1 : 10));
        }
    }
    // What is queued now is written once more if the reader is there; then goodbye.
    while (writer_ && drain(true) > 0) {
    }
    while (drain(false) > 0) {
    }
    close();
}

bool read_file(const std::string& path, const std::function<void(const uint8_t*, size_t)>& frame, std::string& error) {
    fstrm_file_options* fopt = fstrm_file_options_init();
    fstrm_file_options_set_file_path(fopt, path.c_str());
    fstrm_reader_options* ropt = fstrm_reader_options_init();
    fstrm_reader_options_add_content_type(ropt, kContentType, sizeof kContentType - 1);
    fstrm_reader_options_set_max_frame_size(ropt, 1 << 20);
    fstrm_reader* r = fstrm_file_reader_init(fopt, ropt);
    fstrm_file_options_destroy(&fopt);
    fstrm_reader_options_destroy(&ropt);
    if (!r || fstrm_reader_open(r) != fstrm_res_success) {
        error = "cannot open " + path + " as a Frame Streams file of dnstap";
        if (r) fstrm_reader_destroy(&r);
        return false;
    }
    fstrm_res res;
    const uint8_t* data = nullptr;
    size_t len = 0;
    while ((res = fstrm_reader_read(r, &data, &len)) == fstrm_res_success) frame(data, len);
    fstrm_reader_destroy(&r);
    if (res != fstrm_res_stop) error = path + ": not a complete Frame Streams file of dnstap";
    return res == fstrm_res_stop;
}

namespace {
// An enum field's number as it came: protobuf-c stores any number a message holds in a proto2 enum field, and
// reading one outside the enum's values as the C enum type is undefined behaviour (fuzz_dnstap found it).
template <class E>
int number(const E& field) {
    static_assert(sizeof(E) == sizeof(int));
    int v = 0;
    std::memcpy(&v, &field, sizeof v);
    return v;
}
}  // namespace

bool decode(const uint8_t* data, size_t len, Decoded& out) {
    Dnstap__Dnstap* d = dnstap__dnstap__unpack(nullptr, len, data);
    if (!d) return false;
    bool ok = number(d->type) == DNSTAP__DNSTAP__TYPE__MESSAGE && d->message;
    if (ok) {
        const Dnstap__Message& m = *d->message;
        out.response = number(m.type) == DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE;
        ok = out.response || number(m.type) == DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
        out.tcp = m.has_socket_protocol && number(m.socket_protocol) == DNSTAP__SOCKET_PROTOCOL__TCP;
        auto address = [](const ProtobufCBinaryData& b, uint32_t port, SocketAddress& a) {
            if (b.len != 4 && b.len != 16) return;
            a.address.family = b.len == 4 ? 4 : 6;
            std::memcpy(a.address.bytes.data(), b.data, b.len);
            a.port = static_cast<uint16_t>(port);
        };
        if (m.has_query_address) address(m.query_address, m.query_port, out.client);
        if (m.has_response_address) address(m.response_address, m.response_port, out.server);
        out.time_sec = out.response ? m.response_time_sec : m.query_time_sec;
        out.time_nsec = out.response ? m.response_time_nsec : m.query_time_nsec;
        const ProtobufCBinaryData& msg = out.response ? m.response_message : m.query_message;
        out.message.assign(msg.data, msg.data + msg.len);
        if (d->has_identity) out.identity.assign(reinterpret_cast<char*>(d->identity.data), d->identity.len);
        if (d->has_extra) out.extra.assign(reinterpret_cast<char*>(d->extra.data), d->extra.len);
    }
    dnstap__dnstap__free_unpacked(d, nullptr);
    return ok;
}

}  // namespace glbd::dnstap
