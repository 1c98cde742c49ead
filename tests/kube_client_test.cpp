// The Kubernetes client's parts that need no server: where the API server is (ApiAccess) and how a response
// is cut into objects as it arrives (ObjectStream). The client against a real kubectl-proven fake is in
// tests/system/fakekube.sh and kube*.sh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "sync/kube/client.hpp"
#include "sync/kube/stream.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(KubeAccess, InClusterUsesTheServiceAccountAndBracketsIpv6) {
    test::TempDir sa;
    write(sa / "token", "tok\n");
    write(sa / "ca.crt", "-----BEGIN CERTIFICATE-----\n");
    write(sa / "namespace", "glbd\n");
    setenv("KUBERNETES_SERVICE_HOST", "2001:db8::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    auto a = kube::ApiAccess::from(conf::Kubernetes{}, sa.path);
    EXPECT_EQ(a.server, "https://[2001:db8::1]:6443");
    EXPECT_EQ(a.token_file, sa / "token");  // a file: re-read, tokens rotate
    EXPECT_EQ(a.ca_file, sa / "ca.crt");
    EXPECT_EQ(a.namespace_, "glbd");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    unsetenv("KUBERNETES_SERVICE_PORT");
    EXPECT_EQ(kube::ApiAccess::from(conf::Kubernetes{}, sa.path).server, "https://10.96.0.1:443");
    unsetenv("KUBERNETES_SERVICE_HOST");
    EXPECT_THROW(kube::ApiAccess::from(conf::Kubernetes{}, sa.path), std::runtime_error);  // not in a cluster
    conf::Kubernetes url;
    url.api_server = "http://127.0.0.1:8080";
    EXPECT_EQ(kube::ApiAccess::from(url, sa.path).server, "http://127.0.0.1:8080");
}

TEST(KubeAccess, KubeconfigCurrentContextWithEmbeddedCaAndClientCertificate) {
    test::TempDir d;
    write(d / "config", R"(apiVersion: v1
kind: Config
current-context: two
contexts:
  - {name: one, context: {cluster: a, user: ua}}
  - {name: two, context: {cluster: b, user: ub, namespace: web}}
clusters:
  - {name: a, cluster: {server: "https://a.example:6443"}}
  - {name: b, cluster: {server: "https://[2001:db8::2]:6443", certificate-authority-data: Q0EtUEVN}}
users:
  - {name: ua, user: {token: nope}}
  - {name: ub, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ, tokenFile: tok}}
)");
    conf::Kubernetes k;
    k.kubeconfig = d / "config";
    auto a = kube::ApiAccess::from(k, d.path);
    EXPECT_EQ(a.server, "https://[2001:db8::2]:6443");
    EXPECT_EQ(a.ca_data, "CA-PEM");
    EXPECT_EQ(a.cert_data, "CERT");
    EXPECT_EQ(a.key_data, "KEY");
    EXPECT_EQ(a.token_file, d / "tok");  // relative to the kubeconfig's folder
    EXPECT_EQ(a.token, "");
    EXPECT_EQ(a.namespace_, "web");
    write(d / "bad", "current-context: missing\ncontexts: []\n");
    k.kubeconfig = d / "bad";
    EXPECT_THROW(kube::ApiAccess::from(k, d.path), std::runtime_error);
    k.kubeconfig = d / "absent";
    EXPECT_THROW(kube::ApiAccess::from(k, d.path), std::runtime_error);
    // The token would go out in clear: a kubeconfig's plain-HTTP server must be a loopback host, exactly.
    for (const char* server : {"http://127.0.0.1.attacker.example:80", "http://10.0.0.1:8080"}) {
        write(d / "http", std::string("current-context: c\ncontexts: [{name: c, context: {cluster: a, user: u}}]\n"
                                      "clusters: [{name: a, cluster: {server: \"") +
                              server + "\"}}]\nusers: [{name: u, user: {token: t}}]\n");
        k.kubeconfig = d / "http";
        EXPECT_THROW(kube::ApiAccess::from(k, d.path), std::runtime_error) << server;
    }
}

struct Collected {
    std::vector<kube::ObjectStream::Object> objects;
    std::vector<kube::ObjectStream::Done> done;
};

// Feeds `text` to a stream `step` bytes at a time (a response arrives in pieces of any size).
Collected stream(kube::ObjectStream::Shape shape, const std::string& text, size_t step, size_t max_object = 1000,
                 bool* ok = nullptr, size_t* bad_lines = nullptr) {
    Collected c;
    kube::ObjectStream s(
        shape, max_object, [&](kube::ObjectStream::Object&& o) { c.objects.push_back(std::move(o)); },
        [&](kube::ObjectStream::Done&& d) { c.done.push_back(std::move(d)); });
    bool good = true;
    for (size_t i = 0; i < text.size(); i += step) good = s.feed(std::string_view(text).substr(i, step)) && good;
    if (ok) *ok = good;
    if (bad_lines) *bad_lines = s.bad_lines();
    return c;
}

TEST(KubeStream, ListItemsComeOneByOneWhateverThePieces) {
    const std::string list =
        R"({"kind":"DNSRecordList","metadata":{"resourceVersion":"77","continue":"c1"},"items":[)"
        R"({"metadata":{"name":"a","namespace":"n"},"spec":{"x":"}{\"]["}},)"
        R"( {"metadata": {"name": "b"}, "spec": {"rootHost": "b.example.com", "y": [1, {"z": null}]}} ]})";
    for (size_t step : {1u, 2u, 7u, 4096u}) {
        bool ok = false;
        Collected c = stream(kube::ObjectStream::Shape::list, list, step, 1000, &ok);
        EXPECT_TRUE(ok);
        ASSERT_EQ(c.objects.size(), 2u) << step;
        EXPECT_EQ(c.objects[0].text, R"({"metadata":{"name":"a","namespace":"n"},"spec":{"x":"}{\"]["}})");
        EXPECT_EQ(c.objects[0].metadata, R"({"name":"a","namespace":"n"})");
        EXPECT_TRUE(c.objects[0].whole);
        EXPECT_EQ(c.objects[0].bytes, c.objects[0].text.size());
        EXPECT_EQ(c.objects[1].metadata, R"({"name": "b"})");
        ASSERT_EQ(c.done.size(), 1u);
        EXPECT_EQ(c.done[0].metadata, R"({"resourceVersion":"77","continue":"c1"})");
    }
}

TEST(KubeStream, AnObjectOverTheLimitKeepsItsMetadataOnly) {
    std::string big = R"({"metadata":{"name":"big","namespace":"n","resourceVersion":"5"},"spec":{"pad":")" +
                      std::string(5000, 'x') + R"("}})";
    Collected c = stream(kube::ObjectStream::Shape::list, R"({"items":[)" + big + "]}", 100, 1000);
    ASSERT_EQ(c.objects.size(), 1u);
    EXPECT_FALSE(c.objects[0].whole);
    EXPECT_EQ(c.objects[0].text, "");
    EXPECT_EQ(c.objects[0].bytes, big.size());
    EXPECT_EQ(c.objects[0].metadata, R"({"name":"big","namespace":"n","resourceVersion":"5"})");
}

// Only the metadata fields a record is known by are kept: annotations (kubectl's last-applied copy of the
// whole object, or padding) and managedFields may be of any size and must not cost an object its name. (On
// the old code the 20 KiB annotation cut the metadata, and the name was lost: a delete missed.)
TEST(KubeStream, MetadataKeepsTheFieldsARecordIsKnownByWhateverElseItHolds) {
    std::string pad(20'000, 'x');
    std::string big = R"({"metadata":{"name":"big","annotations":{"pad":")" + pad + R"("},"namespace":"n",)" +
                      R"("managedFields":[{"manager":")" + pad + R"("}],"labels":{"a":"b"},"resourceVersion":"5"},)" +
                      R"("spec":{"pad":")" + pad + R"("}})";
    for (size_t step : {1u, 4096u}) {
        Collected c = stream(kube::ObjectStream::Shape::list, R"({"items":[)" + big + "]}", step, 1000);
        ASSERT_EQ(c.objects.size(), 1u);
        EXPECT_FALSE(c.objects[0].whole);
        EXPECT_EQ(c.objects[0].bytes, big.size());
        EXPECT_EQ(c.objects[0].metadata, R"({"name":"big","namespace":"n","labels":{"a":"b"},"resourceVersion":"5"})");
        c = stream(kube::ObjectStream::Shape::events, R"({"type":"DELETED","object":)" + big + "}\n", step, 1000);
        ASSERT_EQ(c.objects.size(), 1u);
        EXPECT_EQ(c.objects[0].metadata, R"({"name":"big","namespace":"n","labels":{"a":"b"},"resourceVersion":"5"})");
    }
}

TEST(KubeStream, WatchEventsAreLinesAndABadLineIsSkipped) {
    const std::string events = R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                               "\n"
                               R"({"type":"MODIFIED","object":{"metadata":{"name":"b")"
                               "\n"  // cut short by its line's end
                               "garbage\n"
                               R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
                               "\n"
                               R"({"type":"ERROR","object":{"kind":"Status","code":410}})"
                               "\n";
    for (size_t step : {1u, 3u, 4096u}) {
        size_t bad = 0;
        Collected c = stream(kube::ObjectStream::Shape::events, events, step, 1000, nullptr, &bad);
        EXPECT_EQ(bad, 2u);
        ASSERT_EQ(c.done.size(), 3u) << step;
        EXPECT_EQ(c.done[0].type, "ADDED");
        EXPECT_EQ(c.done[1].type, "BOOKMARK");
        EXPECT_EQ(c.done[2].type, "ERROR");
        ASSERT_EQ(c.objects.size(), 3u);
        EXPECT_EQ(c.objects[1].metadata, R"({"resourceVersion":"9"})");
        EXPECT_EQ(c.objects[2].text, R"({"kind":"Status","code":410})");
    }
}

TEST(KubeStream, AListThatIsNotJsonStops) {
    bool ok = true;
    Collected c = stream(kube::ObjectStream::Shape::list, "[1,2]", 1, 1000, &ok);
    EXPECT_FALSE(ok);
    c = stream(kube::ObjectStream::Shape::list, "}", 1, 1000, &ok);
    EXPECT_FALSE(ok);
    std::string deep(100'000, '[');
    c = stream(kube::ObjectStream::Shape::list, "{\"items\":" + deep, 4096, 1000, &ok);
    EXPECT_FALSE(ok);  // nested deeper than any object: refused, not followed
    EXPECT_TRUE(c.objects.empty());
}

}  // namespace
