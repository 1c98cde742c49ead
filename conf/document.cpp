// conf/document.cpp — libyaml's parser events into the document's arena.
#include "conf/document.hpp"

#include <yaml.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace glbd::conf {

size_t Node::size() const {
    switch (kind()) {
        case Kind::sequence: return d_->items.size();
        case Kind::map: return d_->items.size() / 2;
        default: return 0;
    }
}

Node Node::operator[](size_t i) const {
    if (!is_sequence() || i >= d_->items.size()) return Node();
    return Node(d_->items[i]);
}

Node Node::operator[](std::string_view key) const {
    if (!is_map()) return Node();
    for (size_t i = 0; i + 1 < d_->items.size(); i += 2) {
        const Data* k = d_->items[i];
        if (k->kind == Kind::scalar && k->text == key) return Node(d_->items[i + 1]);
    }
    return Node();
}

Node::Pairs Node::pairs() const {
    if (!is_map()) return Pairs{nullptr, nullptr};
    const Data* const* b = d_->items.data();
    return Pairs{b, b + d_->items.size() / 2 * 2};
}

namespace {

// libyaml's parser, deleted with its scope.
struct Parser {
    yaml_parser_t p{};
    Parser() {
        if (!yaml_parser_initialize(&p)) throw YamlError(0, 0, "out of memory");
    }
    ~Parser() { yaml_parser_delete(&p); }
    Parser(const Parser&) = delete;
    Parser& operator=(const Parser&) = delete;
};

// One event, deleted with its scope.
struct Event {
    yaml_event_t e{};
    Event() = default;
    ~Event() { yaml_event_delete(&e); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
};

int place(size_t n) { return n > static_cast<size_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(n); }

// A plain scalar without a tag that YAML reads as null (the core schema): "", "~", "null", "Null", "NULL".
bool is_null(const yaml_event_t& e) {
    if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !e.data.scalar.plain_implicit) return false;
    const std::string_view v(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
    return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
}

}  // namespace

YamlError::YamlError(int line_, int column_, const std::string& problem)
    : std::runtime_error(problem), line(line_), column(column_) {}

// Events into the arena: each node made where it starts, attached to the sequence or map being filled.
class DocumentBuilder {
public:
    DocumentBuilder(Document& doc, const Document::TopScalar& on_top_scalar) : doc_(doc), on_top_(on_top_scalar) {}

    // Whether the first document is complete.
    bool on(const yaml_event_t& e) {
        const auto mark = e.start_mark;
        switch (e.type) {
            case YAML_SCALAR_EVENT: scalar(e); break;
            case YAML_ALIAS_EVENT: {
                auto it = anchors_.find(std::string(text(e.data.alias.anchor)));
                if (it == anchors_.end())
                    throw YamlError(place(mark.line), place(mark.column), "the referenced anchor is not defined");
                attach(it->second);
                break;
            }
            case YAML_SEQUENCE_START_EVENT:
                open_.push_back(&add(mark, Node::Kind::sequence, e.data.sequence_start.anchor));
                break;
            case YAML_MAPPING_START_EVENT:
                open_.push_back(&add(mark, Node::Kind::map, e.data.mapping_start.anchor));
                break;
            case YAML_SEQUENCE_END_EVENT:
            case YAML_MAPPING_END_EVENT: open_.pop_back(); break;
            case YAML_DOCUMENT_END_EVENT:
            case YAML_STREAM_END_EVENT: return true;
            default: break;  // the stream's and the document's starts
        }
        return false;
    }

private:
    static std::string_view text(const yaml_char_t* s) {
        return s ? std::string_view(reinterpret_cast<const char*>(s)) : std::string_view();
    }
    void scalar(const yaml_event_t& e) {
        if (is_null(e)) {
            add(e.start_mark, Node::Kind::null, e.data.scalar.anchor);
            return;
        }
        Node::Data& d = add(e.start_mark, Node::Kind::scalar, e.data.scalar.anchor);
        d.text.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        if (on_top_ && open_.size() == 1 && open_[0]->kind == Node::Kind::map) {  // the root map's
            const auto& items = open_[0]->items;  // ... key, value: this scalar is a value when the count is even
            if (items.size() % 2 == 0 && items[items.size() - 2]->kind == Node::Kind::scalar)
                on_top_(items[items.size() - 2]->text, std::string(d.text));
        }
    }
    void attach(const Node::Data* d) {
        if (open_.empty()) {
            if (!doc_.root_) doc_.root_ = d;
        } else {
            open_.back()->items.push_back(d);
        }
    }
    Node::Data& add(const yaml_mark_t& m, Node::Kind kind, const yaml_char_t* anchor) {
        Node::Data& d = doc_.arena_.emplace_back();
        d.kind = kind, d.line = place(m.line), d.column = place(m.column);
        attach(&d);
        if (anchor) anchors_[std::string(text(anchor))] = &d;  // a later anchor of the same name replaces it
        return d;
    }

    Document& doc_;
    const Document::TopScalar& on_top_;
    std::vector<Node::Data*> open_;                               // being filled, innermost last
    std::unordered_map<std::string, const Node::Data*> anchors_;  // by name
};

Document::Document(const std::string& text, const TopScalar& on_top_scalar) {
    Parser parser;
    yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    DocumentBuilder builder(*this, on_top_scalar);
    for (bool done = false; !done;) {
        Event event;
        if (!yaml_parser_parse(&parser.p, &event.e)) {
            const yaml_parser_t& p = parser.p;
            std::string problem = p.problem ? p.problem : "malformed YAML";
            if (p.context) problem = std::string(p.context) + ": " + problem;
            if (p.error != YAML_READER_ERROR)
                throw YamlError(place(p.problem_mark.line), place(p.problem_mark.column), problem);
            // The reader (bytes that are not UTF-8, a control character) gives the byte's offset, not a mark.
            const size_t at = std::min(p.problem_offset, text.size());
            const size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
            const size_t line =
                static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n'));
            const size_t column = line_start == std::string::npos ? at : at - line_start - 1;
            throw YamlError(place(line), place(column), problem);
        }
        done = builder.on(event.e);
    }
    if (!root_) root_ = &arena_.emplace_back(Node::Kind::null, -1, -1);
}

}  // namespace glbd::conf
