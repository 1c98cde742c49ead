// sync/kube/stream — a Kubernetes response read as its bytes arrive, one object at a time: a list
// (`{"metadata":{...},"items":[{...},...]}`) hands over each item, a watch stream (one event object a line,
// `{"type":"ADDED","object":{...}}`) each event's object. An object is kept whole up to `max_object` bytes;
// a larger one keeps only its metadata (its name), so a list of any size costs one object's memory. The
// framing is lexical (strings, escapes, nesting); the objects themselves are parsed by the caller. Not
// thread-safe (one request's); never throws.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace glbd::kube {

class ObjectStream {
public:
    struct Object {
        std::string text;      // the object's JSON when `whole`
        std::string metadata;  // its "metadata" value's JSON, the kMetadataKept members only (under kMaxSmall bytes)
        size_t bytes = 0;      // its size in the stream
        bool whole = false;
    };
    // A top-level value beside the objects, by key: a list's "metadata", an event's "type".
    struct Done {
        std::string type;      // an event's type (a watch stream)
        std::string metadata;  // a list's metadata object
    };
    static constexpr size_t kMaxSmall = size_t{16} << 10;
    // The metadata members kept (a record is known by them); the rest (annotations, managedFields) are not.
    static constexpr std::array<std::string_view, 8> kMetadataKept = {
        "name",  "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
        "labels"};

    enum class Shape { list, events };
    // `on_object` gets each item (list) or event object; `on_done` each top-level value once it closed
    // (a list once, an event a line), after its objects.
    ObjectStream(Shape shape, size_t max_object, std::function<void(Object&&)> on_object,
                 std::function<void(Done&&)> on_done);

    // Takes the next bytes. false: what came is not a stream of that shape (an error says where); for a
    // watch stream the bad line is skipped and the next one read.
    bool feed(std::string_view data);
    [[nodiscard]] const std::string& error() const { return error_; }
    [[nodiscard]] size_t bad_lines() const { return bad_lines_; }
    [[nodiscard]] Shape shape() const { return shape_; }

private:
    void step(char c);
    void keep(char c);
    void keep_metadata(char c);
    void step_in_string(char c);
    void open(char c, bool at_top, bool at_object);
    void close();
    void reset_top();
    void fail(const char* why);

    Shape shape_;
    size_t max_object_;
    std::function<void(Object&&)> on_object_;
    std::function<void(Done&&)> on_done_;

    // The lexer: nesting depth (1 inside the top object), strings and their escapes.
    int depth_ = 0;
    bool in_string_ = false, escape_ = false;
    bool expect_key_ = false;  // at depth 1 or in the object, the next string is a key
    std::string key_;          // the string being read (a key), or the last key read
    bool key_open_ = false;
    std::string top_key_, object_key_;  // the current key at depth 1, and inside the object being read

    // The object being read (it opened at object_depth_).
    int object_depth_ = 0;  // 0: none
    Object object_;
    bool object_meta_ = false;  // inside its "metadata" value
    int meta_depth_ = 0;
    std::string member_;  // the metadata member being read (kept if its key is in kMetadataKept)
    // A small top-level value being kept (an event's type, a list's metadata).
    std::string small_;
    bool small_open_ = false;
    int small_depth_ = 0;
    Done done_;

    bool bad_ = false;  // skipping to the end of a bad line (events) or of everything (a list)
    size_t bad_lines_ = 0;
    std::string error_;
};

}  // namespace glbd::kube
