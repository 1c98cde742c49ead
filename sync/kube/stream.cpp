#include "sync/kube/stream.hpp"

#include <algorithm>

namespace glbd::kube {
namespace {
constexpr int kMaxDepth = 512;       // nesting deeper than any Kubernetes object
constexpr size_t kMaxKeyBytes = 64;  // longer keys are none glbd looks for
}  // namespace

ObjectStream::ObjectStream(Shape shape, size_t max_object, std::function<void(Object&&)> on_object,
                           std::function<void(Done&&)> on_done)
    : shape_(shape), max_object_(max_object), on_object_(std::move(on_object)), on_done_(std::move(on_done)) {}

bool ObjectStream::feed(std::string_view data) {
    for (char c : data) {
        step(c);
        if (bad_ && shape_ == Shape::list) return false;
    }
    return true;
}

void ObjectStream::fail(const char* why) {
    if (shape_ == Shape::list) {
        error_ = why;
    } else {
        ++bad_lines_;
    }
    bad_ = true;
}

void ObjectStream::reset_top() {
    depth_ = 0;
    in_string_ = escape_ = key_open_ = expect_key_ = false;
    top_key_.clear(), object_key_.clear(), key_.clear();
    object_depth_ = 0;
    object_ = Object{};
    object_meta_ = false;
    small_.clear();
    small_open_ = false;
    done_ = Done{};
}

void ObjectStream::step(char c) {
    if (shape_ == Shape::events && c == '\n' && (bad_ || depth_ > 0)) {
        // An event ends with its line: one cut short is bad, and the next line is the next event.
        if (!bad_) ++bad_lines_;
        bad_ = false;
        reset_top();
        return;
    }
    if (bad_) return;
    if (depth_ == 0 && c != '{' && c != ' ' && c != '\t' && c != '\r' && c != '\n') return fail("not a JSON object");
    keep(c);
    if (in_string_) return step_in_string(c);
    bool at_top = depth_ == 1, at_object = object_depth_ && depth_ == object_depth_;
    switch (c) {
        case '"':
            in_string_ = true;
            if ((at_top || at_object) && expect_key_) {
                key_open_ = true;
                key_.clear();
            } else if (at_top && shape_ == Shape::events && top_key_ == "type") {
                small_open_ = true, small_depth_ = depth_;
                small_.assign(1, c);
            }
            return;
        case ':':
            if (at_top || at_object) expect_key_ = false;
            return;
        case ',':
            if (at_top || at_object) expect_key_ = true;
            return;
        case '{':
        case '[': return open(c, at_top, at_object);
        case '}':
        case ']': return close();
        default: return;  // white space, numbers, true, false, null
    }
}

// Every byte of the object being read (and of its metadata, and of a kept top-level value) is its own.
void ObjectStream::keep(char c) {
    if (object_depth_) {
        ++object_.bytes;
        if (object_.whole && object_.text.size() < max_object_) {
            object_.text.push_back(c);
        } else if (object_.whole) {
            object_.whole = false;
            std::string().swap(object_.text);
        }
        if (object_meta_) keep_metadata(c);
    }
    if (small_open_ && small_.size() < kMaxSmall) small_.push_back(c);
}

// The metadata object's members one at a time: each is kept only when it is one a record is known by (its
// key in kMetadataKept), so annotations and managedFields of any size cost nothing.
void ObjectStream::keep_metadata(char c) {
    bool member_ends = !in_string_ && depth_ == meta_depth_ + 1 && (c == ',' || c == '}');
    if (!member_ends) {
        if (member_.size() < kMaxSmall) member_.push_back(c);
        return;
    }
    // The member's key: its first string (members are `"key": value`, white space around).
    size_t open = member_.find('"'), close = open == std::string::npos ? open : member_.find('"', open + 1);
    std::string_view key =
        close == std::string::npos ? std::string_view() : std::string_view(member_).substr(open + 1, close - open - 1);
    bool kept = std::find(kMetadataKept.begin(), kMetadataKept.end(), key) != kMetadataKept.end();
    if (kept && member_.size() < kMaxSmall && object_.metadata.size() + member_.size() + 2 <= kMaxSmall) {
        if (object_.metadata.size() > 1) object_.metadata.push_back(',');
        object_.metadata += member_;
    }
    member_.clear();
    if (c == '}') object_.metadata.push_back('}');
}

void ObjectStream::step_in_string(char c) {
    if (escape_) {
        escape_ = false;
    } else if (c == '\\') {
        escape_ = true;
    } else if (c == '"') {
        in_string_ = false;
        if (key_open_) {
            key_open_ = false;
            (depth_ == 1 ? top_key_ : object_key_) = key_;
        } else if (small_open_ && small_depth_ == depth_) {  // a string value kept (an event's type)
            small_open_ = false;
            done_.type = small_.size() >= 2 ? small_.substr(1, small_.size() - 2) : "";
        }
    } else if (key_open_ && key_.size() < kMaxKeyBytes) {
        key_.push_back(c);
    }
}

void ObjectStream::open(char c, bool at_top, bool at_object) {
    if (depth_ == 0 && c != '{') return fail("not a JSON object");
    if (depth_ >= kMaxDepth) return fail("nested too deep");
    bool items = shape_ == Shape::list && depth_ == 2 && top_key_ == "items";
    bool event_object = shape_ == Shape::events && at_top && top_key_ == "object";
    if ((items || event_object) && c == '{') {
        object_depth_ = depth_ + 1;
        object_ = Object{};
        object_.whole = true;
        object_.bytes = 1;
        object_.text.assign(1, c);
        object_key_.clear();
    } else if (at_object && object_key_ == "metadata" && c == '{') {
        object_meta_ = true, meta_depth_ = depth_;
        object_.metadata.assign(1, c);
        member_.clear();
    } else if (at_top && shape_ == Shape::list && top_key_ == "metadata" && c == '{') {
        small_open_ = true, small_depth_ = depth_;
        small_.assign(1, c);
    }
    ++depth_;
    expect_key_ = c == '{' && (depth_ == 1 || depth_ == object_depth_);
}

void ObjectStream::close() {
    if (depth_ == 0) return fail("unbalanced JSON");
    --depth_;
    if (object_meta_ && depth_ == meta_depth_) object_meta_ = false;
    if (small_open_ && depth_ == small_depth_) {
        small_open_ = false;
        done_.metadata = std::move(small_);
        small_.clear();
    }
    if (object_depth_ && depth_ == object_depth_ - 1) {
        object_depth_ = 0;
        on_object_(std::move(object_));
        object_ = Object{};
    }
    if (depth_ == 0) {
        on_done_(std::move(done_));
        reset_top();
        return;
    }
    // Back in the top object or the object being read: what follows is a ',' and a key, or the end.
    expect_key_ = false;
}

}  // namespace glbd::kube
