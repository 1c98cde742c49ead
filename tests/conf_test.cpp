#include <gtest/gtest.h>
#include "conf/config.hpp"
TEST(Conf, DurationParses) { EXPECT_EQ(glbd::conf::parse_duration("1m30s")->count(), 90000); }
