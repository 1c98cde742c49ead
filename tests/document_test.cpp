// conf::Document: the tree the config reader walks, built from libyaml's parser events.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "conf/config.hpp"
#include "conf/document.hpp"

using glbd::conf::Document;
using glbd::conf::Node;
using glbd::conf::YamlError;

TEST(Document, KindsAndPlacesAreTheParsers) {
    Document d("a: 1\nb:\n  - x\n  - {c: \"y\"}\nn: ~\ne:\nq: \"null\"\n");
    Node root = d.root();
    ASSERT_TRUE(root.is_map());
    EXPECT_EQ(root.size(), 5u);
    EXPECT_TRUE(root["a"].is_scalar());
    EXPECT_EQ(root["a"].scalar(), "1");
    EXPECT_EQ(root["a"].line(), 0);
    EXPECT_EQ(root["a"].column(), 3);
    Node b = root["b"];
    ASSERT_TRUE(b.is_sequence());
    EXPECT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].scalar(), "x");
    EXPECT_EQ(b[0].line(), 2);
    EXPECT_EQ(b[0].column(), 4);
    EXPECT_TRUE(b[1].is_map());
    EXPECT_EQ(b[1]["c"].scalar(), "y");
    EXPECT_EQ(b[1].line(), 3);
    // Plain ~ and an empty value are null; a quoted "null" is the string.
    EXPECT_TRUE(root["n"].is_null());
    EXPECT_TRUE(root["e"].is_null());
    EXPECT_TRUE(root["e"].defined());
    EXPECT_TRUE(root["q"].is_scalar());
    EXPECT_EQ(root["q"].scalar(), "null");
}

// Null is YAML's core schema's: a plain scalar without a tag spelt "", "~", "null", "Null" or "NULL"; quoted, tagged
// or spelt otherwise it is text.
TEST(Document, NullIsAPlainUntaggedNullSpelling) {
    Document d("a: null\nb: Null\nc: NULL\nd: ~\ne:\nf: nul\ng: '~'\nh: !!str null\ni: \"\"\nj: nULL\n");
    Node root = d.root();
    for (const char* key : {"a", "b", "c", "d", "e"}) EXPECT_TRUE(root[key].is_null()) << key;
    for (const char* key : {"f", "g", "h", "i", "j"}) EXPECT_TRUE(root[key].is_scalar()) << key;
    EXPECT_EQ(root["h"].scalar(), "null");
    EXPECT_EQ(root["i"].scalar(), "");
}

namespace {
// The error a text that is not YAML gives (a test failure when it parses).
YamlError error_of(const std::string& text) {
    try {
        Document d(text);
    } catch (const YamlError& e) {
        return e;
    }
    ADD_FAILURE() << "parsed: " << text;
    return YamlError(-1, -1, "");
}
}  // namespace

// An alias names an anchor made before it; one that does not is an error at the alias, as is text that is not UTF-8.
TEST(Document, AnAliasOfNoAnchorYetAndBytesNotUtf8AreErrorsWithTheirPlace) {
    const YamlError alias = error_of("a: 1\nb: *x\nc: &x 2\n");
    EXPECT_EQ(alias.line, 1);
    EXPECT_EQ(alias.column, 3);
    EXPECT_STREQ(alias.what(), "the referenced anchor is not defined");
    const YamlError bytes = error_of("a: 1\nb: x\xff\n");
    EXPECT_EQ(bytes.line, 1);
    EXPECT_EQ(bytes.column, 4);
    EXPECT_NE(std::string(bytes.what()).find("UTF-8"), std::string::npos) << bytes.what();
}

TEST(Document, WhatIsNotThereIsUndefinedAndHarmless) {
    Document d("a: [1, 2]\ns: text\n");
    Node root = d.root();
    EXPECT_FALSE(root["missing"]);
    EXPECT_FALSE(root["missing"]["deeper"]);
    EXPECT_FALSE(root["a"][2]);
    EXPECT_FALSE(root["a"]["key"]);  // a list has no keys
    EXPECT_FALSE(root["s"]["key"]);  // nor has a scalar
    EXPECT_FALSE(root["s"][0]);
    EXPECT_EQ(root["s"].size(), 0u);
    EXPECT_EQ(root["a"].scalar(), "");
    EXPECT_EQ(root["missing"].line(), -1);
    int pairs = 0;
    for (auto p : root["a"].pairs()) pairs += p.first.defined();
    EXPECT_EQ(pairs, 0);
}

TEST(Document, DuplicateKeysStayForTheReaderToReport) {
    Document d("k: first\nother: 1\nk: second\n");
    std::string keys;
    for (auto [k, v] : d.root().pairs()) keys.append(k.scalar()).append("=").append(v.scalar()).append(" ");
    EXPECT_EQ(keys, "k=first other=1 k=second ");
    EXPECT_EQ(d.root()["k"].scalar(), "first");
}

TEST(Document, AnAliasIsTheAnchoredNodeNotACopy) {
    // Nine levels of nine aliases: a tree copied per alias would hold 9^9 nodes.
    std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i <= 9; ++i) {
        text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
        for (int k = 0; k < 9; ++k) text += (k ? ", *l" : "*l") + std::to_string(i - 1);
        text += "]\n";
    }
    Document d(text);
    EXPECT_LT(d.nodes(), 200u);
    Node top = d.root()["l9"];
    ASSERT_EQ(top.size(), 9u);
    EXPECT_EQ(top[8][8][8][8][8][8][8][8][8][8].scalar(), "x");
    // An alias inside the node it names is a cycle: walking it by keys goes round, never copies.
    Document loop("a: &x {b: *x, v: 1}\n");
    EXPECT_EQ(loop.nodes(), 6u);  // the root, a, the map, b, v, 1: the alias adds none
    EXPECT_EQ(loop.root()["a"]["b"]["b"]["b"]["v"].scalar(), "1");
}

TEST(Document, EmptyTextIsANullRootAndBadYamlThrowsWithItsPlace) {
    EXPECT_TRUE(Document("").root().is_null());
    EXPECT_TRUE(Document("# only a comment\n").root().is_null());
    try {
        Document d("a: [1, 2\nb: 3\n");
        FAIL() << "parsed";
    } catch (const YamlError& e) {
        EXPECT_GE(e.line, 0);
    }
    EXPECT_THROW(Document("a: *nowhere\n"), YamlError);
}

TEST(Document, OnlyTheFirstDocumentCounts) {
    Document d("a: 1\n---\nb: 2\n");
    EXPECT_EQ(d.root()["a"].scalar(), "1");
    EXPECT_FALSE(d.root()["b"]);
}

// The reader over this tree still places each problem: line and column of the value, or of the key when
// the key is the problem.
TEST(Document, ConfigErrorsKeepTheirPlaces) {
    auto r = glbd::conf::load_text(
        "cluster: {id: eu-1, instance: a}\nlisten:\n  dns: [\"127.0.0.1:53\"]\n"
        "zones:\n  - origin: glb.example.com\n    nameservers: [{name: ns.glb.example.com, addresses: [192.0.2.1]}]\n"
        "hosts:\n  - name: a.glb.example.com\n    ttl: many\n    bogus: 1\n    endpoints: [192.0.2.10]\n",
        "t.yaml");
    std::string all;
    for (const auto& e : r.errors) all += e.str() + "\n";
    ASSERT_EQ(r.errors.size(), 2u) << all;
    EXPECT_NE(all.find("t.yaml:9:10: hosts[0].ttl: must be an integer"), std::string::npos) << all;
    EXPECT_NE(all.find("t.yaml:10:5: hosts[0].bogus: unknown key"), std::string::npos) << all;
}

// The root map's scalar values are told as the parser reaches them: a key read before a YAML error later in the
// text is told all the same, a nested key of the same name or a key whose value is not a scalar is not.
TEST(Document, TheRootMapsScalarsAreToldAsTheParserReachesThem) {
    std::vector<std::pair<std::string, std::string>> told;
    Document::TopScalar tell = [&](std::string_view key, const std::string& value) {
        told.emplace_back(std::string(key), value);
    };
    Document d("a: 1\nb: {stateDir: nested}\nstateDir: /var/lib/glbd\nc: [x, y]\n\"d\": 'q'\n", tell);
    EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{
                        {"a", "1"}, {"stateDir", "/var/lib/glbd"}, {"d", "q"}}));
    told.clear();
    EXPECT_THROW(Document("stateDir: /s\nhosts: [a, b\n", tell), YamlError);
    EXPECT_EQ(told, (std::vector<std::pair<std::string, std::string>>{{"stateDir", "/s"}}));
    told.clear();
    Document list("- stateDir\n- x\n", tell);  // a root that is not a map tells nothing
    Document scalar("stateDir\n", tell);
    EXPECT_TRUE(told.empty());
}

// A load tells its stateDir hook the directory before the config is checked, whatever the rest holds.
TEST(Document, ALoadTellsItsStateDirHookWhateverTheRestHolds) {
    std::vector<std::string> dirs;
    glbd::conf::LoadHooks hooks{[&](const std::string& dir) { dirs.push_back(dir); }};
    auto r = glbd::conf::load_text("stateDir: /var/lib/glbd\nnotAKey: 1\n", "test.yaml", hooks);
    EXPECT_FALSE(r.config);
    EXPECT_EQ(dirs, std::vector<std::string>{"/var/lib/glbd"});
    dirs.clear();
    r = glbd::conf::load_text("cluster: {id: a}\n", "test.yaml", hooks);
    EXPECT_TRUE(dirs.empty());
}
