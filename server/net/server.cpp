#include "server/net/server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "resolver/base/thread_name.hpp"
#include "resolver/explain.hpp"
#include "resolver/wire/consts.hpp"
#include "server/net/answer_cache.hpp"
#include "server/net/signing_budget.hpp"
#include "server/net/tcp.hpp"

namespace glbd {
using net::bump;
using net::client_address;
namespace {

constexpr int kBatch = 32;
constexpr size_t kUdpIn = 4096;
constexpr size_t kUdpOut = 4096;
// A query thread's scheduler slice (Linux 6.12+ reads sched_runtime of a SCHED_OTHER thread as its slice;
// older kernels ignore it). A thread with a short slice gets an early deadline when it wakes, so EEVDF lets
// it run at once instead of after the slice of what holds the core: the health checker's thread (nice 10)
// no longer adds its bursts to answers on a shared core (bench/health-load.sh). Its share of the CPU is
// the same as without.
constexpr uint64_t kQuerySliceNs = 100'000;

// Asks for kQuerySliceNs for the calling thread; a kernel or a seccomp filter that refuses changes nothing.
void ask_short_slice() {
    struct {  // struct sched_attr, its first version (SCHED_ATTR_SIZE_VER0, 48 bytes); glibc 2.36 has no wrapper
        uint32_t size, sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime, sched_deadline, sched_period;
    } attr{};
    static_assert(sizeof attr == 48);
    attr.size = sizeof attr;
    attr.sched_policy = SCHED_OTHER;
    attr.sched_runtime = kQuerySliceNs;
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
        spdlog::debug("the query thread keeps the default scheduler slice: sched_setattr: {}", std::strerror(errno));
    }
}

// UDP sockets block (their thread waits in recvmmsg, woken at least every kLetGoMs to notice a stop and to
// let go of a replaced snapshot); TCP sockets are non-blocking, for libuv.
Fd bind_socket(const SocketAddress& a, int type) {
    sockaddr_storage ss{};
    socklen_t len = a.to_sockaddr(ss);
    Fd sock(socket(ss.ss_family, type | (type == SOCK_STREAM ? SOCK_NONBLOCK : 0) | SOCK_CLOEXEC, 0));
    const int fd = sock.get();
    if (!sock) throw std::runtime_error("socket(" + a.str() + "): " + std::strerror(errno));
    if (type == SOCK_DGRAM) {
        timeval wake{0, kLetGoMs * 1000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake);
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        int e = errno;
        throw std::runtime_error(std::string("cannot bind ") + (type == SOCK_DGRAM ? "UDP " : "TCP ") + a.str() + ": " +
                                 std::strerror(e));
    }
    if (type == SOCK_STREAM && listen(fd, 1024) != 0) {
        int e = errno;
        throw std::runtime_error("cannot listen on TCP " + a.str() + ": " + std::strerror(e));
    }
    return sock;
}

// Fails when another socket already holds the address: the worker sockets use SO_REUSEPORT, which would
// otherwise let a second glbd (a leftover, or one started twice) silently take a share of the traffic.
// The probe sets no SO_REUSEPORT, so it cannot bind beside one; SO_REUSEADDR on TCP lets it bind over
// connections in TIME_WAIT, which an active listener is not.
void check_unshared(const SocketAddress& a, int type) {
    sockaddr_storage ss{};
    socklen_t len = a.to_sockaddr(ss);
    Fd sock(socket(ss.ss_family, type | SOCK_CLOEXEC, 0));
    if (!sock) throw std::runtime_error("socket(" + a.str() + "): " + std::strerror(errno));
    int one = 1;
    if (type == SOCK_STREAM) setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) setsockopt(sock.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    int rc = bind(sock.get(), reinterpret_cast<sockaddr*>(&ss), len);
    int e = errno;
    sock.reset();
    if (rc != 0) {
        throw std::runtime_error(
            std::string("cannot bind ") + (type == SOCK_DGRAM ? "UDP " : "TCP ") + a.str() + ": " +
            (e == EADDRINUSE ? "already in use by another socket (another glbd?)" : std::strerror(e)));
    }
}

}  // namespace

int ServerCounters::qtype_index(uint16_t t) {
    switch (t) {
        case wire::type::A: return 0;
        case wire::type::AAAA: return 1;
        case wire::type::CNAME: return 2;
        case wire::type::MX: return 3;
        case wire::type::TXT: return 4;
        case wire::type::NS: return 5;
        case wire::type::SOA: return 6;
        case wire::type::SRV: return 7;
        case wire::type::CAA: return 8;
        case wire::type::PTR: return 9;
        case wire::type::ANY: return 10;
        case wire::type::IXFR:
        case wire::type::AXFR: return 11;
        default: return 12;
    }
}

const char* ServerCounters::qtype_name(int i) {
    static const char* names[kQtypes] = {"A",   "AAAA", "CNAME", "MX",  "TXT", "NS",   "SOA",
                                         "SRV", "CAA",  "PTR",   "ANY", "XFR", "other"};
    return names[i];
}

void ServerCounters::count(const QueryInfo& qi, Transport t, bool sent, const Snapshot* snap) {
    int tr = t == Transport::udp ? 0 : 1;
    if (!sent) {
        bump(dropped[tr]);
        return;
    }
    if (qi.counter != kNoCounter && snap) {
        answers.reserve(snap->counters);
        answers.bump(qi.counter);
    }
    bump(rcode[tr][qi.rcode < kCountedRcodes ? qi.rcode : kCountedRcodes - 1]);
    bump(qtype[tr][qtype_index(qi.qtype)]);
    bump(outcome[static_cast<int>(qi.outcome)]);
    if (qi.truncated) bump(truncated);
    if (qi.fallback) bump(fallback);
    if (qi.fail_open) bump(fail_open);
}

void ServerCounters::observe(uint64_t n, uint64_t ns) {
    if (n == 0) return;
    double each_us = static_cast<double>(ns) / 1000.0 / static_cast<double>(n);
    int b = 0;
    while (b < kBuckets - 1 && each_us > kBucketUs[b]) ++b;
    bump(duration_bucket[b], n);
    bump(duration_count, n);
    bump(duration_sum_ns, ns);
}

void ServerCounters::add(const ServerCounters& o) {
    auto sum = [](std::atomic<uint64_t>& to, const std::atomic<uint64_t>& from) {
        to.store(to.load(std::memory_order_relaxed) + from.load(std::memory_order_relaxed), std::memory_order_relaxed);
    };
    for (int t = 0; t < 2; ++t) {
        for (size_t i = 0; i < kCountedRcodes; ++i) sum(rcode[t][i], o.rcode[t][i]);
        for (int i = 0; i < kQtypes; ++i) sum(qtype[t][i], o.qtype[t][i]);
        sum(dropped[t], o.dropped[t]);
        sum(over_signing_budget[t], o.over_signing_budget[t]);
    }
    for (size_t i = 0; i < kOutcomes; ++i) sum(outcome[i], o.outcome[i]);
    for (int i = 0; i < kBuckets; ++i) sum(duration_bucket[i], o.duration_bucket[i]);
    for (auto [to, from] : {std::pair{&truncated, &o.truncated},
                            {&fallback, &o.fallback},
                            {&fail_open, &o.fail_open},
                            {&tcp_connections, &o.tcp_connections},
                            {&rrl_slipped, &o.rrl_slipped},
                            {&rrl_dropped, &o.rrl_dropped},
                            {&handed_off, &o.handed_off},
                            {&handoff_dropped, &o.handoff_dropped},
                            {&tcp_refused, &o.tcp_refused},
                            {&tcp_idle_closed, &o.tcp_idle_closed},
                            {&tcp_evicted, &o.tcp_evicted},
                            {&tcp_source_refused, &o.tcp_source_refused},
                            {&tcp_rejected_closed, &o.tcp_rejected_closed},
                            {&duration_count, &o.duration_count},
                            {&duration_sum_ns, &o.duration_sum_ns}}) {
        sum(*to, *from);
    }
}

namespace {
uint64_t mono_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

// ---------------------------------------------------------------- UDP ---
// One thread per (worker, address): it blocks in recvmmsg until at least one datagram is there, takes
// up to kBatch that are waiting, answers them and sends the answers with one sendmmsg. No event loop
// sits in between: an epoll round per batch cost more kernel time than the answers (see README).
struct DnsServer::UdpWorker {
    DnsServer& server;
    Fd socket;
    SocketAddress local;              // the address it is bound to (the query log's server address)
    dnstap::Producer* tap = nullptr;  // the query log, when on
    ServerCounters counters;
    RateLimiter rrl;
    ThreadSigningBudget signing;  // before each signature: a flood is not signed first and dropped after
    std::thread thread;
    Publisher::Reader reader;
    AnswerCache cache;
    // Batches: receive into in[], answer into out[].
    mmsghdr in_msgs[kBatch]{}, out_msgs[kBatch]{};
    iovec in_iov[kBatch]{}, out_iov[kBatch]{};
    sockaddr_storage peers[kBatch]{};
    uint8_t in[kBatch][kUdpIn];  // not cleared: a page is touched when a datagram first needs it
    uint8_t out[kBatch][kUdpOut];

    UdpWorker(DnsServer& s, Fd bound_socket, SocketAddress bound)
        : server(s), socket(std::move(bound_socket)), local(bound), rrl(s.options_.rrl), reader(s.publisher_) {
        for (int i = 0; i < kBatch; ++i) {
            in_iov[i] = {in[i], kUdpIn};
            in_msgs[i].msg_hdr.msg_iov = &in_iov[i];
            in_msgs[i].msg_hdr.msg_iovlen = 1;
            in_msgs[i].msg_hdr.msg_name = &peers[i];
            out_msgs[i].msg_hdr.msg_iov = &out_iov[i];
            out_msgs[i].msg_hdr.msg_iovlen = 1;
        }
    }

    void run() {
        int used = kBatch;  // headers the last receive wrote into, to be reset
        while (!server.stopping_.load(std::memory_order_relaxed)) {
            for (int i = 0; i < used; ++i) {
                in_msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
                in_msgs[i].msg_hdr.msg_flags = 0;
            }
            int n = recvmmsg(socket.get(), in_msgs, kBatch, MSG_WAITFORONE, nullptr);
            used = n > 0 ? n : 0;
            // Also after a timeout: an idle thread lets go of a replaced snapshot within kLetGoMs.
            const Snapshot* snap = reader.get();
            // 0: shut down; -1: timeout or signal. When stopping, what woke the thread is shutdown()'s empty
            // read (seen as a datagram of 0 bytes), not a query.
            if (n > 0 && !server.stopping_.load(std::memory_order_relaxed)) answer_batch(n, snap);
        }
    }

    void answer_batch(int n, const Snapshot* snap) {
        uint64_t started = mono_ns();
        auto second = static_cast<uint32_t>(started / 1000000000ull);
        signing.set_second(second);
        int m = 0;
        timespec received{};  // for the query log: when recvmmsg returned (every datagram was there by then)
        if (tap) clock_gettime(CLOCK_REALTIME, &received);
        for (int i = 0; i < n; ++i) {
            if (hand_off(i)) continue;  // a peer's heartbeat: neither answered nor a query to log
            QueryInfo qi;
            size_t len = 0;
            const bool logged = tap && tap->sampled();
            Client c{client_address(peers[i]), Transport::udp, &signing};
            if (snap && !(in_msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) {
                const uint64_t gen = reader.generation();
                len = cache.find(gen, c.address, in[i], in_msgs[i].msg_len, out[m], kUdpOut, qi);
                if (len == 0) {
                    len = answer(*snap, in[i], in_msgs[i].msg_len, c, out[m], kUdpOut, &qi);
                    if (len > 0 && qi.over_signing_budget) {  // never unsigned: asked again over TCP, maybe
                        bump(counters.over_signing_budget[0]);
                        len = truncate_response(out[m], len);
                    } else if (len > 0) {
                        cache.store(gen, c.address, in[i], in_msgs[i].msg_len, out[m], len, qi);
                    }
                }
            }
            counters.count(qi, Transport::udp, len > 0, snap);
            if (len > 0 && rrl.enabled() && !qi.cookie_valid) {  // a valid DNS cookie proves the address
                auto action = rrl.check(c.address, qi.outcome, second);
                if (action == RateLimiter::Action::drop) {
                    bump(counters.rrl_dropped);
                    len = 0;
                } else if (action == RateLimiter::Action::slip) {
                    bump(counters.rrl_slipped);
                    len = truncate_response(out[m], len);
                }
            }
            if (logged) log_exchange(i, received, len > 0 ? out[m] : nullptr, len, snap, qi);
            if (len == 0) continue;
            out_iov[m] = {out[m], len};
            out_msgs[m].msg_hdr.msg_name = &peers[i];
            out_msgs[m].msg_hdr.msg_namelen = in_msgs[i].msg_hdr.msg_namelen;
            ++m;
        }
        counters.observe(static_cast<uint64_t>(n), mono_ns() - started);
        send_batch(m);
    }

    // Datagram i, when it is a NOTIFY about the hand-off name, goes to the hand-off socket (never waited for);
    // true when it was such a NOTIFY, sent or dropped.
    bool hand_off(int i) {
        const uint8_t* m = in[i];
        const size_t len = in_msgs[i].msg_len;
        if (!server.handoff_fd_ || len < wire::kHeaderSize || (in_msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) return false;
        const uint16_t flags = static_cast<uint16_t>(m[2] << 8 | m[3]);
        if ((flags & wire::flag::QR) || wire::opcode_of(flags) != wire::opcode::NOTIFY) return false;
        if (!net::question_is(m, len, server.handoff_name_)) return false;
        iovec parts[2] = {{&peers[i], sizeof(sockaddr_storage)}, {in[i], len}};
        msghdr h{};
        h.msg_iov = parts;
        h.msg_iovlen = 2;
        bump(sendmsg(server.handoff_fd_.get(), &h, MSG_DONTWAIT) < 0 ? counters.handoff_dropped : counters.handed_off);
        return true;
    }

    // The query log's record of datagram i and what was sent for it (null: nothing).
    void log_exchange(int i, const timespec& received, const uint8_t* response, size_t len, const Snapshot* snap,
                      const QueryInfo& qi) {
        dnstap::Exchange x;
        SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&peers[i]), x.client);
        x.server = local;
        x.query = in[i], x.query_len = std::min<size_t>(in_msgs[i].msg_len, kUdpIn), x.query_time = received;
        x.response = response, x.response_len = len;
        char extra[512];
        if (response) {
            clock_gettime(CLOCK_REALTIME, &x.response_time);
            if (snap) x.extra = std::string_view(extra, describe_answer(*snap, qi, extra, sizeof extra));
        }
        tap->log(x);
    }

    void send_batch(int m) {
        for (int sent = 0; sent < m;) {
            int k = sendmmsg(socket.get(), out_msgs + sent, static_cast<unsigned>(m - sent), MSG_DONTWAIT);
            if (k <= 0) break;  // a full socket buffer drops the rest, as UDP may
            sent += k;
        }
    }
};

DnsServer::DnsServer(Publisher& publisher, ServerOptions options)
    : publisher_(publisher), options_(std::move(options)) {}

DnsServer::~DnsServer() { stop(); }

int DnsServer::hand_off_udp_notify(std::string name) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return -1;
    handoff_fd_.reset(fds[0]);
    handoff_name_ = std::move(name);
    return fds[1];
}

std::unique_ptr<ServerCounters> DnsServer::totals() const {
    auto t = std::make_unique<ServerCounters>();
    for (const auto& w : udp_) t->add(w->counters);
    if (tcp_) t->add(tcp_->counters);
    return t;
}

std::vector<uint64_t> DnsServer::answers(uint32_t ids) const {
    std::vector<uint64_t> out(ids, 0);
    auto add = [&](const AnswerCounts& a) {
        for (uint32_t i = 0; i < ids; ++i) out[i] += a.get(i);
    };
    for (const auto& w : udp_) add(w->counters.answers);
    if (tcp_) add(tcp_->counters.answers);
    return out;
}

void DnsServer::bind() {
    // Bind everything first, in this thread, so that a failure is reported before anything runs.
    if (bound_) return;
    for (const auto& a : options_.listen) {
        check_unshared(a, SOCK_DGRAM);
        check_unshared(a, SOCK_STREAM);
    }
    for (unsigned t = 0; t < options_.threads; ++t) {
        for (const auto& a : options_.listen)
            udp_.push_back(std::make_unique<UdpWorker>(*this, bind_socket(a, SOCK_DGRAM), a));
    }
    if (options_.dnstap) {
        tap_ = std::make_unique<dnstap::Sink>(*options_.dnstap, static_cast<unsigned>(udp_.size()) + 1);
        for (size_t i = 0; i < udp_.size(); ++i) udp_[i]->tap = &tap_->producer(static_cast<unsigned>(i));
    }
    tcp_ = std::make_unique<TcpWorker>(*this);
    for (const auto& a : options_.listen) tcp_->fds.push_back(bind_socket(a, SOCK_STREAM));
    bound_ = true;
}

void DnsServer::start() {
    bind();
    stopping_ = false;
    for (auto& wp : udp_) {
        UdpWorker* w = wp.get();
        w->thread = std::thread([w] {
            name_this_thread("glbd-udp");
            ask_short_slice();
            w->run();
        });
    }

    if (tap_) {
        tcp_->tap = &tap_->producer(static_cast<unsigned>(udp_.size()));
        tap_->start();
    }
    tcp_->start();
    running_ = true;
}

void DnsServer::stop() {
    if (!running_) {
        udp_.clear();  // closes their sockets, and the TCP listeners' with the worker
        tcp_.reset();
        return;
    }
    running_ = false;
    // A UDP thread sees the flag when recvmmsg returns: shutdown() wakes it at once (Linux wakes the
    // waiters of an unconnected socket even though the call reports ENOTCONN); the receive timeout
    // is the backstop.
    stopping_ = true;
    for (auto& w : udp_) ::shutdown(w->socket.get(), SHUT_RD);
    if (tcp_) tcp_->request_stop();
    for (auto& w : udp_) {
        w->thread.join();
        w->socket.reset();
    }
    if (tcp_) tcp_->join();
    if (tap_) tap_->stop();  // after the query threads: nothing is submitted any more
    udp_.clear();
    tcp_.reset();
}

}  // namespace glbd
