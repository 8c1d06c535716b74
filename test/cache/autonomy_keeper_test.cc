// Tests for cache/autonomy_keeper.h against a scripted cloud: offline nothing is read or written,
// online the node is read and the condition patched only when it must change, by strategic merge
// patch of nodes/<node>/status.
#include "cache/autonomy_keeper.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace yurthub::cache {
namespace {

using ::testing::HasSubstr;

constexpr const char* kAutonomousNode =
    R"({"kind":"Node","metadata":{"name":"edge-node-1","annotations":)"
    R"({"node.beta.openyurt.io/autonomy":"true"}},"status":{"conditions":[]}})";

class AutonomyKeeperTest : public ::testing::Test {
 protected:
  std::unique_ptr<AutonomyKeeper> keeper() {
    AutonomyKeeper::Settings s;
    s.node_name = "edge-node-1";
    s.executor = io_.get_executor();
    s.call_cloud = [this](CloudRequest request) { return answer(std::move(request)); };
    s.cache_health = [this] { return health_; };
    s.unix_now = [] { return std::int64_t{1795748400}; };
    return std::make_unique<AutonomyKeeper>(std::move(s), registry_);
  }
  boost::asio::awaitable<Result<CloudAnswer>> answer(CloudRequest request) {
    sent_.push_back(request);
    if (!online_) co_return make_error(ErrorCode::Unavailable, "no healthy apiserver");
    if (request.method == "GET") co_return CloudAnswer{200, node_};
    co_return CloudAnswer{200, "{}"};
  }
  void check(AutonomyKeeper& k) {
    boost::asio::co_spawn(io_, k.check(), boost::asio::detached);
    io_.restart();
    io_.run();
  }

  boost::asio::io_context io_;
  base::MetricsRegistry registry_;
  bool online_ = true;
  std::string node_ = kAutonomousNode;
  CacheHealth health_;
  std::vector<CloudRequest> sent_;
};

TEST_F(AutonomyKeeperTest, OfflineNothingIsWritten) {
  online_ = false;
  auto k = keeper();
  check(*k);
  ASSERT_EQ(sent_.size(), 1u);  // the read, refused before anything was sent
  EXPECT_EQ(sent_[0].method, "GET");
  EXPECT_THAT(registry_.render(),
              HasSubstr(R"(node_yurthub_autonomy_checks_total{outcome="offline"} 1)"));
  EXPECT_THAT(registry_.render(),
              HasSubstr(R"(node_yurthub_autonomy_checks_total{outcome="written"} 0)"));
}

TEST_F(AutonomyKeeperTest, OnlineTheConditionIsPatchedOnce) {
  auto k = keeper();
  check(*k);
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[0].target, "/api/v1/nodes/edge-node-1");
  EXPECT_EQ(sent_[1].method, "PATCH");
  EXPECT_EQ(sent_[1].target, "/api/v1/nodes/edge-node-1/status");
  EXPECT_EQ(sent_[1].content_type, "application/strategic-merge-patch+json");
  EXPECT_THAT(sent_[1].body, HasSubstr(R"("type":"Autonomy","status":"True")"));
  EXPECT_THAT(sent_[1].body, HasSubstr(R"("lastTransitionTime":"2026-11-27T03:00:00Z")"));
  EXPECT_THAT(registry_.render(),
              HasSubstr(R"(node_yurthub_autonomy_checks_total{outcome="written"} 1)"));

  // The cloud now has it: the next check only reads.
  node_ = R"({"kind":"Node","metadata":{"name":"edge-node-1","annotations":)"
          R"({"node.beta.openyurt.io/autonomy":"true"}},"status":{"conditions":[{"type":)"
          R"("Autonomy","status":"True","reason":"autonomy enabled successfully"}]}})";
  sent_.clear();
  check(*k);
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].method, "GET");
  EXPECT_THAT(registry_.render(),
              HasSubstr(R"(node_yurthub_autonomy_checks_total{outcome="unchanged"} 1)"));
}

TEST_F(AutonomyKeeperTest, FailingCacheBecomesUnknownOnTheFourthCheck) {
  node_ = R"({"kind":"Node","metadata":{"name":"edge-node-1","annotations":)"
          R"({"node.beta.openyurt.io/autonomy":"true"}},"status":{"conditions":[{"type":)"
          R"("Autonomy","status":"True","reason":"autonomy enabled successfully"}]}})";
  health_ = {CacheHealth::State::Failing, "1 cached objects could not be written"};
  auto k = keeper();
  for (int i = 0; i < kMaxCacheFailures; ++i) check(*k);
  EXPECT_EQ(sent_.size(), 3u);  // reads only
  // Offline checks do not count.
  online_ = false;
  check(*k);
  online_ = true;
  sent_.clear();
  check(*k);
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_THAT(sent_[1].body, HasSubstr(R"("status":"Unknown","reason":"cache failed")"));
  EXPECT_THAT(sent_[1].body, HasSubstr("1 cached objects could not be written"));
}

}  // namespace
}  // namespace yurthub::cache
