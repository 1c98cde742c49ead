// server/net/tcp — the TCP side of the DNS server (RFC 7766), internal to server/net. One thread with its
// own libuv loop: 2-byte framing, pipelined messages answered in order, and the limits that keep a hostile
// client from holding memory or slots (see docs/security.md):
//   - back-pressure: a connection whose unwritten answers reach tcpMaxInflight messages or
//     tcpMaxInflight KiB is not read (nor its buffered messages answered) until the client takes them;
//     every answer counts, the sync hook's included;
//   - a message the hook rejects (unsigned or badly signed sync traffic) gets its error answer and then
//     the connection is closed;
//   - at most tcpMaxConnectionsPerSource connections per client address (IPv6: per /64); beyond
//     tcpMaxConnections one connection is closed to make room: the oldest of those that never had a message
//     answered, else the one answered longest ago; never one from a peer's address (an address from which
//     the hook answered a message in the last 10 minutes: sync answers only signed requests). When only
//     peers' connections are left, a new connection from elsewhere is closed instead. So a peer that was
//     heard once keeps reaching this server however many slots others hold;
//   - tcpIdleTimeout counts from the last complete message that got an answer (or the last answer written),
//     so bytes that never make an answerable message keep nothing open.
#pragma once

#include <uv.h>

#include <array>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "server/net/server.hpp"
#include "server/net/signing_budget.hpp"

namespace glbd {
namespace net {

constexpr size_t kTcpMax = 65535;

// Single writer: a plain add, published with relaxed atomics (no lock prefix).
inline void bump(std::atomic<uint64_t>& a, uint64_t n = 1) {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// A client's address; an IPv4-mapped IPv6 one is IPv4.
inline Address client_address(const sockaddr_storage& ss) {
    Address a;
    Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&ss), a);
    a.unmap();
    return a;
}

// Whether the question's name is `name` (wire form, lower case): a cheap test that keeps every other query
// away from the TCP hook.
bool question_is(const uint8_t* msg, size_t len, const std::string& name);

}  // namespace net

struct DnsServer::TcpWorker {
    struct Conn {
        uv_tcp_t handle{};
        uv_timer_t idle{};
        TcpWorker* worker = nullptr;
        std::vector<uint8_t> in;
        unsigned pending = 0;      // answers handed to libuv, not yet written
        size_t queued_bytes = 0;   // their bytes
        uint64_t last_active = 0;  // loop time of the last answered message (or of the accept)
        bool reading = false;
        bool closing = false;
        bool close_when_written = false;  // a rejected message was answered: close once it is written
        bool counted = false;             // holds a place in per_source
        bool answered_any = false;        // some message of it got an answer
        bool trusted = false;             // from a peer's address (see above)
        MoreMessages more;                // the rest of a long answer, produced as the client takes it
        int open_handles = 2;
        Address peer;
        SocketAddress client, local;                       // both ends, for the query log
        std::unique_ptr<ConnectionSigningBudget> signing;  // its share of the thread's (made at accept)
    };
    struct Write {
        uv_write_t req{};
        Conn* conn = nullptr;
        size_t len = 0;
        std::unique_ptr<uint8_t[]> buf;
    };
    using SourceKey = std::array<uint8_t, 9>;  // family, then the address (IPv6: its /64)

    ServerCounters counters;
    ThreadSigningBudget signing;  // the TCP thread's: every connection's within it
    DnsServer& server;
    uv_loop_t loop{};
    uv_async_t wake{};
    uv_timer_t let_go{};  // every kLetGoMs: an idle worker lets go of a replaced snapshot (reader.get())
    std::vector<Fd> fds;  // the listening sockets, until start() hands them to libuv
    std::vector<uv_tcp_t> listeners;
    std::vector<std::unique_ptr<Conn>> conns;  // every connection not yet freed (closing ones too), in accept order
    size_t open = 0;                           // those not closing
    std::map<SourceKey, unsigned> per_source;
    static constexpr size_t kMaxTrusted = 256;     // peer addresses remembered as trusted
    static constexpr size_t kMaxTrustedKept = 64;  // of their connections, kept from eviction
    static constexpr uint64_t kTrustMs = 600'000;
    std::map<SourceKey, uint64_t> trusted;  // a peer's address -> loop time its last signed request was answered
    std::thread thread;
    Publisher::Reader reader;
    uint8_t read_buf[net::kTcpMax + 2];
    uint8_t answer_buf[net::kTcpMax];

    explicit TcpWorker(DnsServer& s) : server(s), reader(s.publisher_) {}
    dnstap::Producer* tap = nullptr;  // the query log, when on

    // Listens on `fds` and runs the loop on its own thread; throws when a listen fails.
    void start();
    // From another thread: close everything and let the loop end; then join().
    void request_stop() { uv_async_send(&wake); }
    void join();

    void accept(uv_stream_t* listener);
    static SourceKey source_key(const Address& a);
    // Makes room for one more connection (see above); false when every other connection is a peer's.
    bool evict_one(const Conn* keep);
    bool is_trusted(const SourceKey& k);
    void trust(const Address& a);
    void touch(Conn* c);
    void set_reading(Conn* c, bool on);
    [[nodiscard]] bool backed_up(const Conn* c) const;
    // Answers the complete messages in c->in until the connection backs up; reads again when it can.
    void process(Conn* c);
    // Answers one message; true when something was answered.
    bool handle_one(Conn* c, const uint8_t* msg, size_t len);
    void send(Conn* c, const uint8_t* data, size_t len);
    void pump(Conn* c);
    void on_written(std::unique_ptr<Write> w, int status);
    void close(Conn* c);
    void maybe_free(Conn* c);
};

}  // namespace glbd
