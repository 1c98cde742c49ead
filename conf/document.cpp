// conf/document.cpp — yaml-cpp's parser events into the document's arena.
#include "conf/document.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <sstream>

namespace glbd::conf {

const std::string& Node::empty() {
    static const std::string none;
    return none;
}

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

class DocumentBuilder final : public YAML::EventHandler {
public:
    DocumentBuilder(Document& doc, const Document::TopScalar& on_top_scalar) : doc_(doc), on_top_(on_top_scalar) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override { add(m, Node::Kind::null, anchor); }
    void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
        // The parser refuses an alias to an unknown anchor; the check is for a parser that would not.
        const Node::Data* d = anchor < anchors_.size() ? anchors_[anchor] : nullptr;
        attach(d ? d : &make(YAML::Mark::null_mark(), Node::Kind::null));
    }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
        add(m, Node::Kind::scalar, anchor).text = value;
        if (on_top_ && open_.size() == 1 && open_[0]->kind == Node::Kind::map) {  // the root map's
            const auto& items = open_[0]->items;  // ... key, value: this scalar is a value when the count is even
            if (items.size() % 2 == 0 && items[items.size() - 2]->kind == Node::Kind::scalar)
                on_top_(items[items.size() - 2]->text, value);
        }
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open_.push_back(&add(m, Node::Kind::sequence, anchor));
    }
    void OnSequenceEnd() override { open_.pop_back(); }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open_.push_back(&add(m, Node::Kind::map, anchor));
    }
    void OnMapEnd() override { open_.pop_back(); }

private:
    Node::Data& make(const YAML::Mark& m, Node::Kind kind) {
        Node::Data& d = doc_.arena_.emplace_back();
        d.kind = kind, d.line = m.line, d.column = m.column;
        return d;
    }
    void attach(const Node::Data* d) {
        if (open_.empty()) {
            if (!doc_.root_) doc_.root_ = d;
        } else {
            open_.back()->items.push_back(d);
        }
    }
    Node::Data& add(const YAML::Mark& m, Node::Kind kind, YAML::anchor_t anchor) {
        Node::Data& d = make(m, kind);
        attach(&d);
        if (anchor != YAML::NullAnchor) {
            if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, nullptr);
            anchors_[anchor] = &d;
        }
        return d;
    }

    Document& doc_;
    const Document::TopScalar& on_top_;
    std::vector<Node::Data*> open_;           // the sequences and maps being filled, innermost last
    std::vector<const Node::Data*> anchors_;  // by the parser's anchor number
};

Document::Document(const std::string& text, const TopScalar& on_top_scalar) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentBuilder builder(*this, on_top_scalar);
    parser.HandleNextDocument(builder);
    if (!root_) root_ = &arena_.emplace_back(Node::Data{Node::Kind::null, -1, -1, {}, {}});
}

}  // namespace glbd::conf
