// sync/state_file_threads — a large state.json read on two threads (state_file.hpp): where its origins lie found
// from the text's strings and nesting alone, the later half of them read on a thread of their own while this
// one reads the rest of the text, by the reader in state_file_read.cpp.
#include <array>
#include <cstring>
#include <future>
#include <iterator>
#include <span>
#include <string_view>
#include <utility>

#include "sync/state_file.hpp"

namespace glbd::sync {

namespace {

// The later origins (about half the bytes) read on a thread of its own, each as a text of its own, while this
// thread reads the rest: the text up to the earlier half's end and from the array's close. The same origins in
// the same order as read_origins_whole; throws on anything (the caller reads the text whole then, for its error).
std::vector<InstanceState> read_in_two(std::string_view text, const OriginSpans& spans) {
    const auto& o = spans.origins;
    const size_t all = o.back().second - o.front().first;
    size_t k = 1;
    while (k + 1 < o.size() && o[k].first - o.front().first < all / 2) ++k;
    auto later = std::async(std::launch::async, [&] { return read_origins_alone(text, std::span(o).subspan(k)); });
    std::string rest;
    rest.reserve(o[k - 1].second + text.size() - spans.close);
    rest.append(text.substr(0, o[k - 1].second)).append(text.substr(spans.close));
    std::vector<InstanceState> first;
    try {
        first = read_origins_whole(rest);
    } catch (...) {
        later.wait();  // (it reads `text`, which the caller holds only until this returns)
        throw;
    }
    std::vector<InstanceState> second = later.get();
    first.insert(first.end(), std::make_move_iterator(second.begin()), std::make_move_iterator(second.end()));
    return first;
}

}  // namespace

std::optional<OriginSpans> origin_spans(std::string_view t) {
    static constexpr auto kMarks = [] {  // the bytes that begin a string or open or close an object or array
        std::array<bool, 256> marks{};
        for (char c : std::string_view("\"{}[]")) marks[static_cast<unsigned char>(c)] = true;
        return marks;
    }();
    OriginSpans out;
    size_t depth = 0, begin = 0;
    bool inside = false;   // in the origins array, between its elements (at depth 2) or in one
    bool after = false;    // an element ended and no comma came yet
    std::string_view key;  // the last string closed at depth 1: the key of the value that follows
    for (size_t i = 0; i < t.size(); ++i) {
        if (!inside || depth != 2) {  // (18 MB in under 20 ms: what lies between the marks is passed over)
            while (i < t.size() && !kMarks[static_cast<unsigned char>(t[i])]) ++i;
            if (i == t.size()) break;
        }
        const char c = t[i];
        if (inside && depth == 2 && c != '{' && c != ']') {  // between two origins: a comma, white space
            if (c == ',' && after) {
                after = false;
            } else if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
                return std::nullopt;
            }
        } else if (c == '"') {
            const size_t from = i + 1;
            for (;;) {  // to the next quote that no backslash escapes (an even run of them before it)
                const void* quote = std::memchr(t.data() + i + 1, '"', t.size() - i - 1);
                if (!quote) return std::nullopt;
                i = static_cast<size_t>(static_cast<const char*>(quote) - t.data());
                size_t slashes = 0;
                while (i - slashes > from && t[i - slashes - 1] == '\\') ++slashes;
                if (slashes % 2 == 0) break;
            }
            if (depth == 1) key = t.substr(from, i - from);
        } else if (c == '{' || c == '[') {
            ++depth;
            if (depth == 2 && c == '[' && key == "origins") {
                if (inside || out.close) return std::nullopt;  // a second "origins"
                inside = true, after = false;
            } else if (inside && depth == 3) {
                if (after) return std::nullopt;                                            // no comma before it
                if (out.origins.size() == ReportLimits::kMaxOrigins) return std::nullopt;  // (as many as known at once)
                begin = i;
            }
        } else if (c == '}' || c == ']') {
            if (depth == 0) return std::nullopt;
            if (inside && depth == 3) out.origins.emplace_back(begin, i + 1), after = true;
            if (inside && depth == 2) {
                if (c != ']' || (!after && !out.origins.empty())) return std::nullopt;  // a comma after the last
                inside = false, out.close = i;
            }
            --depth;
        }
    }
    if (inside || !out.close) return std::nullopt;
    return out;
}

std::vector<InstanceState> read_state_file(std::string_view text, size_t two_threads_from) {
    if (text.size() >= two_threads_from) {
        if (auto spans = origin_spans(text); spans && spans->origins.size() >= 2) {
            try {
                return read_in_two(text, *spans);
            } catch (const std::exception&) {
                // Read whole below: what is wrong, and where in the file.
            }
        }
    }
    return read_origins_whole(text);
}

std::vector<InstanceState> read_state_file(std::istream& in) {
    std::string text(std::istreambuf_iterator<char>(in), {});
    return read_state_file(text);
}

}  // namespace glbd::sync
