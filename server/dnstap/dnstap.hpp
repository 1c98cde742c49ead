// server/dnstap — the query log as dnstap (AUTH_QUERY and AUTH_RESPONSE messages, protobuf-c with the dnstap
// schema) over Frame Streams (libfstrm: framing and the bidirectional handshake) to a Unix socket or a file.
// Query threads hand frames to a bounded single-producer queue each, never waiting: a full queue drops the
// frame and counts it. One writer thread drains the queues into the sink, reconnecting with backoff when
// the reader goes away (what is submitted meanwhile is dropped and counted, so memory stays bounded).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/base/log_throttle.hpp"

struct fstrm_writer;  // libfstrm's

namespace glbd::dnstap {

struct Options {
    bool unix_socket = false;  // else a file
    std::string path;
    std::string identity;
    std::string version;
    bool queries = true, responses = true;
    unsigned sample = 1;  // one exchange in `sample`
};

// One exchange as a query thread saw it. `response` is null when nothing was sent (a dropped or malformed
// query); `extra` is the reason of a load-balanced answer, else empty.
struct Exchange {
    bool tcp = false;
    SocketAddress client, server;
    const uint8_t* query = nullptr;
    size_t query_len = 0;
    timespec query_time{};
    const uint8_t* response = nullptr;
    size_t response_len = 0;
    timespec response_time{};
    std::string_view extra;
};

class Sink;

// A query thread's end: one thread only. Never blocks, never locks; allocates one buffer per frame logged.
class Producer {
public:
    static constexpr size_t kCapacity = 4096;  // frames waiting per thread
    // Whether this exchange is logged (the sample), decided before any work is done for it.
    bool sampled() {
        if (sample_ <= 1) return true;
        return ++seen_ % sample_ == 0;
    }
    void log(const Exchange& x);

private:
    friend class Sink;
    struct Frame {
        uint8_t* data;
        uint32_t len;
    };
    Producer(Sink& sink, unsigned sample) : sink_(sink), sample_(sample) {}
    void push(uint8_t* data, size_t len);
    bool pop(Frame& out);  // the writer thread

    Sink& sink_;
    unsigned sample_;
    uint64_t seen_ = 0;
    std::unique_ptr<Frame[]> ring_{new Frame[kCapacity]};
    alignas(64) std::atomic<size_t> head_{0};  // written by the producer
    alignas(64) std::atomic<size_t> tail_{0};  // written by the writer thread
};

class Sink {
public:
    // Checks what can be checked without the reader (the socket path's length); throws std::runtime_error.
    Sink(Options options, unsigned producers);
    ~Sink();
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;

    Producer& producer(unsigned i) { return *producers_.at(i); }
    [[nodiscard]] const Options& options() const { return options_; }
    void start();
    // Writes what is queued (bounded by the socket's timeouts), says goodbye to the reader and joins.
    void stop();

    [[nodiscard]] uint64_t written() const { return written_.load(std::memory_order_relaxed); }
    [[nodiscard]] uint64_t dropped() const;
    [[nodiscard]] bool connected() const { return connected_.load(std::memory_order_relaxed); }

private:
    friend class Producer;
    void run();
    bool open();
    void close();
    size_t drain(bool write);

    Options options_;
    std::vector<std::unique_ptr<Producer>> producers_;
    ::fstrm_writer* writer_ = nullptr;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> connected_{false};
    std::atomic<uint64_t> written_{0};
    std::atomic<uint64_t> dropped_unsent_{0};  // by the writer thread: while closed, or a failed write
    std::atomic<uint64_t> dropped_full_{0};    // by the producers: a full queue
    LogThrottle throttle_{1, 60000};           // the writer thread's: a sink that stays away, once a minute
    std::string why_;                          // the writer thread's: why the sink's last open failed
};

// The frame bytes of one message (tests and the reader): AUTH_QUERY or AUTH_RESPONSE of `x`.
std::vector<uint8_t> encode(const Options& o, const Exchange& x, bool response);

// A decoded frame, for `glbd explain --dnstap` (and its fuzz target). False when the bytes are not a dnstap
// message this reader understands; never throws.
struct Decoded {
    bool response = false, tcp = false;
    SocketAddress client, server;
    uint64_t time_sec = 0;
    uint32_t time_nsec = 0;
    std::vector<uint8_t> message;  // the query, or the response
    std::string identity, extra;
};
bool decode(const uint8_t* data, size_t len, Decoded& out);

// Calls `frame` with every data frame of a Frame Streams file of dnstap, in order; false with `error` when
// the file cannot be read as one (a frame over 1 MiB, a truncated or foreign file).
bool read_file(const std::string& path, const std::function<void(const uint8_t*, size_t)>& frame, std::string& error);

// One line for a decoded response: time, transport, client, question, rcode, answers, and the logged reason
// (print.cpp, with ldns). The frame's bytes are a file's, so nothing in them is trusted: text is escaped.
std::string describe(const Decoded& d);
// `glbd explain --dnstap FILE`: every response of the file as describe() prints it; 0, or 2 when the file
// or a frame is not what it should be.
int print_responses(const std::string& path, std::FILE* out);

}  // namespace glbd::dnstap
