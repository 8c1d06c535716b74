// base/time_text.h: the text Kubernetes writes for a time.
#include "base/time_text.h"

#include <gtest/gtest.h>

namespace yurthub::base {
namespace {

TEST(Rfc3339Utc, WritesSecondsInUtcAsMetav1Time) {
  EXPECT_EQ(rfc3339_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(rfc3339_utc(1795748645), "2026-11-27T03:04:05Z");
  EXPECT_EQ(rfc3339_utc(1795748400), "2026-11-27T03:00:00Z");
}

}  // namespace
}  // namespace yurthub::base
