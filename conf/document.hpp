// conf/document — a YAML document as a small read-only tree, built from libyaml's parser events.
//
// The parser's events are all that is used: for a config of 10,000 hosts (1.5 MB of YAML, as bench/scale.sh writes
// it) yaml-cpp's node tree took 88 MB and 750 ms to build and free, and its parser's events alone 8 MB and 160-290 ms
// (the longest part of a start at 10,000 hosts x 20 clusters); libyaml (C, Debian's libyaml-0-2) gives the same events
// in about 30 ms. Here a node is one slot in the document's arena: its kind, its place (line, column), its scalar text,
// and its children (a map's as key, value, key, value ...). An alias is the anchored node itself, shared, never copied
// (no "billion laughs"). Handles (`Node`) are two pointers' worth and valid while their `Document` lives; a handle to
// nothing (a missing key) is `!defined()`.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory_resource>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace glbd::conf {

class Node {
public:
    enum class Kind : unsigned char { undefined, null, scalar, sequence, map };
    // A node, its text and its children in its document's memory (Document::memory_), never the heap's own.
    struct Data {
        using allocator_type = std::pmr::polymorphic_allocator<>;
        explicit Data(const allocator_type& a = {}) : text(a), items(a) {}
        Data(Kind k, int l, int c, const allocator_type& a = {}) : kind(k), line(l), column(c), text(a), items(a) {}
        Kind kind = Kind::undefined;
        int line = -1, column = -1;           // 0-based, as libyaml counts; -1: no place (a missing node)
        std::pmr::string text;                // a scalar's
        std::pmr::vector<const Data*> items;  // a sequence's elements; a map's keys and values, alternating
    };

    Node() = default;
    explicit Node(const Data* d) : d_(d) {}

    Kind kind() const { return d_ ? d_->kind : Kind::undefined; }
    bool defined() const { return kind() != Kind::undefined; }
    bool is_null() const { return kind() == Kind::null; }
    bool is_scalar() const { return kind() == Kind::scalar; }
    bool is_sequence() const { return kind() == Kind::sequence; }
    bool is_map() const { return kind() == Kind::map; }
    explicit operator bool() const { return defined(); }

    // A scalar's text; empty for anything else. Valid while the document lives.
    std::string_view scalar() const { return d_ && d_->kind == Kind::scalar ? std::string_view(d_->text) : ""; }
    int line() const { return d_ ? d_->line : -1; }
    int column() const { return d_ ? d_->column : -1; }

    // A sequence's elements or a map's pairs; 0 for anything else.
    size_t size() const;
    // The i-th element of a sequence; undefined past the end or when this is not a sequence.
    Node operator[](size_t i) const;
    Node operator[](int i) const { return i < 0 ? Node() : (*this)[static_cast<size_t>(i)]; }
    // The value of the first pair whose key is the scalar `key`; undefined when there is none or this is
    // not a map.
    Node operator[](std::string_view key) const;
    Node operator[](const char* key) const { return (*this)[std::string_view(key)]; }

    // A map's pairs, in document order (duplicates kept: the reader reports them).
    struct Pairs;
    Pairs pairs() const;

private:
    const Data* d_ = nullptr;
};

struct NodePair {
    Node first, second;
};

struct Node::Pairs {
    class Iterator {
    public:
        explicit Iterator(const Data* const* p) : p_(p) {}
        NodePair operator*() const { return NodePair{Node(p_[0]), Node(p_[1])}; }
        Iterator& operator++() {
            p_ += 2;
            return *this;
        }
        bool operator!=(const Iterator& o) const { return p_ != o.p_; }

    private:
        const Data* const* p_;
    };
    const Data* const* b;
    const Data* const* e;
    Iterator begin() const { return Iterator(b); }
    Iterator end() const { return Iterator(e); }
};

// Text that is not YAML: where (0-based line and column) and what the parser found (what()).
struct YamlError : std::runtime_error {
    YamlError(int line, int column, const std::string& problem);
    int line, column;
};

// The first document of a YAML text. Throws YamlError on bad YAML (or an alias of an anchor not defined before
// it); an empty text is a null root. A plain scalar without a tag that YAML reads as null ("", "~", "null",
// "Null", "NULL") is a null node; any other scalar, quoted or not, is text. `on_top_scalar`, when given, is told each
// scalar value of the root map with its key as the parser reaches it, before the rest of the text is read (and whatever
// the rest holds).
class Document {
public:
    using TopScalar = std::function<void(std::string_view key, const std::string& value)>;
    explicit Document(const std::string& text, const TopScalar& on_top_scalar = {});
    Document(const Document&) = delete;
    Document& operator=(const Document&) = delete;

    Node root() const { return Node(root_); }
    size_t nodes() const { return arena_.size(); }

private:
    friend class DocumentBuilder;
    // Everything the document holds, in blocks from 1 MB up, each mapped and unmapped whole (above glibc's
    // mmap threshold): parsing a large config leaves no free space behind in the heap, where the snapshot's large
    // arrays would otherwise be cut from pages the parse had touched (at 10,000 hosts x 20 clusters, 8 MB more
    // resident after start than with those arrays mapped on their own).
    std::pmr::monotonic_buffer_resource memory_{size_t{1} << 20};
    std::pmr::deque<Node::Data> arena_{&memory_};  // stable addresses while it grows
    const Node::Data* root_ = nullptr;
};

}  // namespace glbd::conf
