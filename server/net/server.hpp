// server/net/server — bytes and sockets. UDP: per worker, one thread per listen address with its own
// SO_REUSEPORT socket, blocking in recvmmsg and answering in batches with sendmmsg. TCP (RFC 7766): one
// thread with its own libuv loop, 2-byte framing, pipelining, a cap on connections and on unwritten answers per
// connection, and an idle timeout. Knows nothing of DNS policy: every message goes to answer().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/base/fd.hpp"
#include "resolver/resolver.hpp"
#include "server/dnstap/dnstap.hpp"
#include "server/net/publisher.hpp"
#include "server/net/rrl.hpp"

namespace glbd {

// What the network layer is told by the application (server/app builds it from the config's `listen`,
// `threads` and `rateLimit`).
struct ServerOptions {
    std::vector<SocketAddress> listen;
    unsigned threads = 1;
    unsigned tcp_max_connections = 1000;
    unsigned tcp_max_per_source = 16;
    unsigned tcp_max_inflight = 100;
    std::chrono::milliseconds tcp_idle_timeout{5000};
    RrlOptions rrl;
    std::optional<dnstap::Options> dnstap;  // the query log: every query thread hands it its exchanges
};

// Answers per counter id (Snapshot::counters) of one query thread, in chunks that are added when a
// snapshot with more ids arrives (reserve(), off the per-query path) and kept for the thread's life.
// One writer (a relaxed load and store, no locked instruction, no line shared with other threads);
// get() may run on any thread.
class AnswerCounts {
public:
    static constexpr uint32_t kChunk = 4096, kChunks = 4096;  // up to 16M ids
    AnswerCounts() = default;
    AnswerCounts(const AnswerCounts&) = delete;
    AnswerCounts& operator=(const AnswerCounts&) = delete;
    ~AnswerCounts() {
        for (auto& c : chunks_) delete[] c.load();
    }
    // Allocates only when a snapshot brings more ids than any before: one compare otherwise.
    void reserve(uint32_t ids) {
        if (ids <= reserved_) return;
        for (uint32_t c = 0; c < (ids + kChunk - 1) / kChunk && c < kChunks; ++c) {
            if (!chunks_[c].load(std::memory_order_relaxed))
                chunks_[c].store(new std::atomic<uint64_t>[kChunk](), std::memory_order_release);
        }
        reserved_ = ids;
    }
    void bump(uint32_t id) {
        if (id / kChunk >= kChunks) return;
        std::atomic<uint64_t>* chunk = chunks_[id / kChunk].load(std::memory_order_relaxed);
        if (!chunk) return;  // beyond reserve()
        std::atomic<uint64_t>& c = chunk[id % kChunk];
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    [[nodiscard]] uint64_t get(uint32_t id) const {
        if (id / kChunk >= kChunks) return 0;
        const std::atomic<uint64_t>* chunk = chunks_[id / kChunk].load(std::memory_order_acquire);
        return chunk ? chunk[id % kChunk].load(std::memory_order_relaxed) : 0;
    }

private:
    std::atomic<std::atomic<uint64_t>*> chunks_[kChunks] = {};
    uint32_t reserved_ = 0;  // owner thread
};

// Counters of one query thread: written by that thread alone (a relaxed load and store, no locked
// instruction), read by /metrics through DnsServer::totals().
struct ServerCounters {
    static constexpr int kQtypes = 13;  // A AAAA CNAME MX TXT NS SOA SRV CAA PTR ANY AXFR/IXFR other
    static constexpr int kBuckets = 9;  // answer processing time, microseconds
    static constexpr double kBucketUs[kBuckets] = {0.5, 1, 2, 5, 10, 25, 100, 1000, 1e18};
    std::atomic<uint64_t> rcode[2][kCountedRcodes] = {};  // [transport][rcode]
    std::atomic<uint64_t> qtype[2][kQtypes] = {};
    std::atomic<uint64_t> dropped[2] = {};
    std::atomic<uint64_t> truncated{0}, fallback{0}, fail_open{0};
    std::atomic<uint64_t> rrl_slipped{0}, rrl_dropped{0};
    std::atomic<uint64_t> over_signing_budget[2] = {};        // [transport]: answers not signed (ThreadSigningBudget)
    std::atomic<uint64_t> handed_off{0}, handoff_dropped{0};  // UDP NOTIFYs for sync (hand_off_udp_notify)
    std::atomic<uint64_t> outcome[kOutcomes] = {};
    std::atomic<uint64_t> tcp_connections{0}, tcp_refused{0}, tcp_idle_closed{0};
    std::atomic<uint64_t> tcp_evicted{0}, tcp_source_refused{0}, tcp_rejected_closed{0};
    std::atomic<uint64_t> duration_bucket[kBuckets] = {};
    std::atomic<uint64_t> duration_count{0};
    std::atomic<uint64_t> duration_sum_ns{0};
    AnswerCounts answers;  // not summed by add(): see DnsServer::answers()
    // One query's outcome; an answered load-balanced host also counts under its counter id in `snap`.
    void count(const QueryInfo& qi, Transport t, bool sent, const Snapshot* snap);
    // `n` answers that took `ns` nanoseconds together.
    void observe(uint64_t n, uint64_t ns);
    static int qtype_index(uint16_t qtype);
    static const char* qtype_name(int index);
    void add(const ServerCounters& other);  // for totals
};

// A handler for TCP messages about one name that are not plain queries (sync: transfers and NOTIFYs of
// `_glbd.`). `answered`: it took the message, with its responses in `out` and, for a long answer (a
// transfer), a producer of the rest in `more`, called on the TCP thread for one message at a time while the
// connection takes them (nothing else on the connection is answered until it is done); `rejected`: it took
// it and refused it (unsigned, bad key): the responses are written and the connection closed; `pass` lets
// the resolver answer; `answered_member`: answered, to a peer the server may trust (its connections are
// kept when the server is full). Runs on the TCP thread.
enum class HookVerdict { pass, answered, answered_member, rejected };
using MoreMessages = std::function<bool(std::vector<uint8_t>& next)>;  // false: that was the last
using TcpHook = std::function<HookVerdict(const uint8_t* msg, size_t len, const geo::Address& from,
                                          std::vector<std::vector<uint8_t>>& out, MoreMessages& more)>;

namespace metrics {
class Writer;
}
// The counters (a DnsServer's totals()) as Prometheus families (server/net/metrics.cpp).
void write_metrics(metrics::Writer& out, const ServerCounters& counters);
// The query log's counters: frames written and dropped, and whether the sink is open.
void write_metrics(metrics::Writer& out, const dnstap::Sink& tap);

class DnsServer {
public:
    DnsServer(Publisher& publisher, ServerOptions options);
    ~DnsServer();
    DnsServer(const DnsServer&) = delete;
    DnsServer& operator=(const DnsServer&) = delete;

    // Binds every socket (no thread yet), so that privileges can be dropped before any thread runs.
    // Throws std::runtime_error naming the address.
    void bind();
    // Binds (if not done yet) and starts the threads.
    void start();
    // Stops accepting, closes every socket and joins the threads.
    void stop();
    // Messages whose question is `name` (wire form, lower case) go to `hook` first.
    void set_tcp_hook(std::string name, TcpHook hook) {
        tcp_hook_name_ = std::move(name);
        tcp_hook_ = std::move(hook);
    }
    // UDP NOTIFYs whose question is `name` (wire form, lower case; sync's heartbeats) are not answered: each
    // goes whole to a datagram socket, after the sender's address (a sockaddr_storage), without waiting (when
    // the reader is behind, the socket's buffer is full and the datagram is dropped, as UDP may). Returns the
    // socket's other end for the reader, who owns it; -1 when no socket could be made. Before start().
    int hand_off_udp_notify(std::string name);
    // The sum of every thread's counters, now.
    [[nodiscard]] std::unique_ptr<ServerCounters> totals() const;
    // Every thread's load-balanced answers for counter ids 0..ids-1.
    [[nodiscard]] std::vector<uint64_t> answers(uint32_t ids) const;
    // The query log's sink (null without dnstap), for its counters.
    [[nodiscard]] const dnstap::Sink* dnstap() const { return tap_.get(); }

    struct UdpWorker;
    struct TcpWorker;

private:
    Publisher& publisher_;
    ServerOptions options_;
    TcpHook tcp_hook_;
    std::string tcp_hook_name_;
    std::string handoff_name_;  // hand_off_udp_notify()
    Fd handoff_fd_;             // the writing end
    std::vector<std::unique_ptr<UdpWorker>> udp_;
    std::unique_ptr<TcpWorker> tcp_;
    std::unique_ptr<dnstap::Sink> tap_;  // one producer per UDP worker, then the TCP thread's
    bool running_ = false;
    bool bound_ = false;
    std::atomic<bool> stopping_{false};  // read by the UDP threads after each recvmmsg
};

}  // namespace glbd
