// Publisher: readers see each published snapshot, and the one they let go of is freed by reclaim() on
// the publishing thread, never by the reader.
#include <gtest/gtest.h>

#include <thread>

#include "server/net/publisher.hpp"

using namespace glbd;

namespace {

std::shared_ptr<const Snapshot> snapshot(uint32_t serial) {
    auto s = std::make_shared<Snapshot>();
    s->serial = serial;
    return s;
}

}  // namespace

TEST(Publisher, ReaderSeesEachSnapshot) {
    Publisher pub;
    Publisher::Reader reader(pub);
    EXPECT_EQ(reader.get(), nullptr);
    pub.publish(snapshot(1));
    ASSERT_NE(reader.get(), nullptr);
    EXPECT_EQ(reader.get()->serial, 1u);
    pub.publish(snapshot(2));
    EXPECT_EQ(reader.get()->serial, 2u);
    EXPECT_EQ(reader.generation(), pub.generation());
}

TEST(Publisher, ReaderNeverFreesWhatItLetsGoOf) {
    Publisher pub;
    auto first = snapshot(1);
    std::weak_ptr<const Snapshot> watch = first;
    pub.publish(std::move(first));
    std::thread([&] {
        Publisher::Reader reader(pub);
        EXPECT_EQ(reader.get()->serial, 1u);
        pub.publish(snapshot(2));  // the publisher lets go; the reader still holds 1
        EXPECT_FALSE(watch.expired());
        EXPECT_EQ(reader.get()->serial, 2u);  // the reader lets go of 1 ...
        EXPECT_FALSE(watch.expired());        // ... without freeing it on its thread
    }).join();
    EXPECT_FALSE(watch.expired());
    pub.reclaim();  // the publishing thread frees it
    EXPECT_TRUE(watch.expired());
}

TEST(Publisher, PublishReclaimsToo) {
    Publisher pub;
    Publisher::Reader reader(pub);
    auto first = snapshot(1);
    std::weak_ptr<const Snapshot> watch = first;
    pub.publish(std::move(first));
    reader.get();
    pub.publish(snapshot(2));
    reader.get();
    EXPECT_FALSE(watch.expired());
    pub.publish(snapshot(3));
    EXPECT_TRUE(watch.expired());
}
