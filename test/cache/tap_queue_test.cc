// TapQueue and the deferred taps (cache/tap_queue.h): a list relayed to a client is digested on
// the queue's thread, and the cache ends up as if it had been digested on the worker: a watch that
// follows the list lands after it, a full queue leaves the list uncached and stale, and a watch
// that began while its list was being digested learns that the list failed.
#include "cache/tap_queue.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "base/json_frames.h"
#include "cache/cache_policy.h"
#include "cache/response_taps.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using test_support::Blocker;
using test_support::StoreFixture;

constexpr const char* kPods = "/api/v1/namespaces/default/pods";

kube::RequestInfo kubelet(const std::string& target) {
  return kube::classify_request("GET", target, "kubelet/v1.32.4 (linux/amd64) kubernetes/abc");
}

std::string pod(const std::string& name, int rv, std::size_t padding = 0) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","resourceVersion":")" +
         std::to_string(rv) + R"(","annotations":{"pad":")" + std::string(padding, 'x') +
         R"("}},"spec":{"nodeName":"edge-node-1"}})";
}

std::string pod_list(const std::vector<std::string>& names, int rv, std::size_t padding = 0) {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" +
                    std::to_string(rv) + R"("},"items":[)";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? "," : "") + pod(names[i], rv, padding);
  return out + "]}";
}

class TapQueueTest : public StoreFixture {
 protected:
  // Feeds a list's body in 32 KiB pieces, as relayed but not yet ended; with framed_, as a
  // filter that frames it tells the tap's list_sink() (FilterChain::echo_list), else as bytes.
  void feed_body(hub::ResponseTap& tap, const std::string& body) {
    base::ListSink* sink = tap.list_sink();
    ASSERT_NE(sink, nullptr);  // a list's tap takes a framed list
    std::optional<base::ListFramer> filter;
    if (framed_) filter.emplace(*sink);
    for (std::size_t at = 0; at < body.size(); at += 32 * 1024) {
      const std::string_view piece = std::string_view(body).substr(at, 32 * 1024);
      if (filter)
        ASSERT_TRUE(filter->feed(piece));
      else
        tap.body(piece);
    }
  }
  // The whole list, ended.
  void feed_list(hub::ResponseTap& tap, const std::string& body) {
    feed_body(tap, body);
    tap.end(true);
  }
  // Digests and commits everything queued.
  void settle(TapQueue& queue) {
    ASSERT_TRUE(queue.drain(std::chrono::seconds(10)));
    writer_->flush();
  }
  std::string key() { return policy_.identity(kubelet(kPods))->key(); }

  CachePolicy policy_;
  bool framed_ = false;
};

// The list tests, with the list as bytes and as a filter framed it.
class TapQueueListTest : public TapQueueTest, public ::testing::WithParamInterface<bool> {
 protected:
  TapQueueListTest() { framed_ = GetParam(); }
};
INSTANTIATE_TEST_SUITE_P(BytesOrFramed, TapQueueListTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Framed" : "Bytes"; });

TEST_P(TapQueueListTest, ADeferredListIsCachedAsTheClientGotIt) {
  base::Gauge& queued = metrics_->tap_queue_bytes.with({});
  TapQueue queue(64u << 20, &queued);
  const auto info = kubelet(kPods);
  auto tap = make_list_tap(*writer_, *metrics_, *policy_.identity(info), info, &queue);
  std::vector<std::string> names;
  names.reserve(400);
  for (int i = 0; i < 400; ++i) names.push_back("pod-" + std::to_string(i));
  const std::string body = pod_list(names, 100, 2000);  // 0.8 MB: several pieces
  Blocker blocker(queue);
  feed_list(*tap, body);
  // The gauge shows them: the body, or its members and items with a record each.
  const auto bytes = static_cast<std::int64_t>(body.size());
  EXPECT_GE(queued.value(), framed_ ? bytes * 9 / 10 : bytes);
  EXPECT_LE(queued.value(), framed_ ? bytes * 11 / 10 : bytes);
  blocker.release();
  settle(queue);
  EXPECT_EQ(queued.value(), 0);
  EXPECT_FALSE(tap->failed());
  EXPECT_EQ(names.size(), this->names(key()).size());
  // Each item as sent: those read in place from a piece (CacheOp::piece) and those that spanned
  // two pieces alike.
  for (const std::string& name : names) {
    const auto stored = object_json(key(), "default", name);
    ASSERT_TRUE(stored) << name;
    EXPECT_EQ(*stored, pod(name, 100, 2000)) << name;
  }
  EXPECT_TRUE(queue.idle());
}

TEST_F(TapQueueTest, AWatchThatFollowsAListStillQueuedLandsAfterIt) {
  TapQueue queue;
  const auto list_info = kubelet(kPods);
  const auto watch_info = kubelet(std::string(kPods) + "?watch=true&resourceVersion=100");
  Blocker blocker(queue);
  auto list = make_list_tap(*writer_, *metrics_, *policy_.identity(list_info), list_info, &queue);
  feed_list(*list, pod_list({"a", "b", "c"}, 100));
  // The client got the whole list and watches from its version: b is deleted, c changes.
  auto watch =
      make_watch_tap(*writer_, *metrics_, *policy_.identity(watch_info), watch_info, false, &queue);
  watch->event(R"({"type":"DELETED","object":)" + pod("b", 101) + "}");
  watch->event(R"({"type":"MODIFIED","object":)" + pod("c", 102, 3) + "}");
  watch->events_done();
  EXPECT_FALSE(queue.idle());
  blocker.release();
  settle(queue);
  // Had the events reached the writer before the list, the list would have brought b back and
  // c's older version.
  EXPECT_EQ(names(key()), (std::vector<std::string>{"default/a", "default/c"}));
  EXPECT_EQ(*object_json(key(), "default", "c"), pod("c", 102, 3));
  // Once the queue is idle, the watch's next events are applied without it, in order.
  watch->event(R"({"type":"DELETED","object":)" + pod("a", 103) + "}");
  watch->events_done();
  watch->end(false);
  writer_->flush();
  EXPECT_EQ(names(key()), (std::vector<std::string>{"default/c"}));
  EXPECT_FALSE(watch->failed());
}

TEST_P(TapQueueListTest, AFullQueueLeavesTheListUncachedAndStale) {
  TapQueue queue(300 * 1024);  // room for one piece of 256 KiB, not two
  const auto info = kubelet(kPods);
  auto first = make_list_tap(*writer_, *metrics_, *policy_.identity(info), info, &queue);
  feed_list(*first, pod_list({"old"}, 90));
  settle(queue);
  ASSERT_EQ(names(key()), (std::vector<std::string>{"default/old"}));

  Blocker blocker(queue);
  auto tap = make_list_tap(*writer_, *metrics_, *policy_.identity(info), info, &queue);
  std::vector<std::string> names;
  names.reserve(400);
  for (int i = 0; i < 400; ++i) names.push_back("pod-" + std::to_string(i));
  feed_list(*tap, pod_list(names, 100, 2000));
  blocker.release();
  settle(queue);
  EXPECT_TRUE(tap->failed());
  EXPECT_EQ(metrics_->failures.with({"queue_full"}).value(), 1u);
  // The half-digested list was never swapped in: the previous one stays, marked stale.
  EXPECT_EQ(this->names(key()), (std::vector<std::string>{"default/old"}));
  EXPECT_TRUE(store_->read()->list(key())->stale);
}

TEST_F(TapQueueTest, AWatchThatBeganWhileItsListWasDigestedFailsWhenTheListDid) {
  TapQueue queue;
  const auto list_info = kubelet(kPods);
  const auto watch_info = kubelet(std::string(kPods) + "?watch=true&resourceVersion=100");
  Blocker blocker(queue);
  auto list = make_list_tap(*writer_, *metrics_, *policy_.identity(list_info), list_info, &queue);
  list->body(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},)"
             R"("items":[{"metadata":{"name":"x"}},]})");  // cannot be framed
  list->end(true);
  auto watch =
      make_watch_tap(*writer_, *metrics_, *policy_.identity(watch_info), watch_info, false, &queue);
  EXPECT_FALSE(watch->failed());  // nothing is known yet
  blocker.release();
  ASSERT_TRUE(queue.drain(std::chrono::seconds(10)));
  watch->events_done();  // the relay's next piece: now applied at once
  EXPECT_TRUE(list->failed());
  EXPECT_TRUE(watch->failed());  // the relay ends it with 410 Expired; the client re-lists
  watch->end(false);
}

TEST_F(TapQueueTest, AWatchWithAnIdleQueueIsNotRecheckedAndKeepsGoing) {
  TapQueue queue;
  const auto info = kubelet(kPods);
  writer_->mark_stale(key());  // stale since before the watch: the hub decides that at its start
  auto watch = make_watch_tap(*writer_, *metrics_, *policy_.identity(info), info, false, &queue);
  watch->event(R"({"type":"ADDED","object":)" + pod("a", 5) + "}");
  watch->events_done();
  EXPECT_FALSE(watch->failed());
  watch->end(false);
}

TEST_P(TapQueueListTest, AListIsDigestedOnlyOnceTheClientHasItAll) {
  TapQueue queue;
  const auto info = kubelet(kPods);
  auto tap = make_list_tap(*writer_, *metrics_, *policy_.identity(info), info, &queue);
  // Several pieces.
  ASSERT_NO_FATAL_FAILURE(feed_body(*tap, pod_list({"a", "b", "c"}, 100, 300 * 1024)));
  // Every piece is queued, and none is digested while the list is still being relayed.
  EXPECT_FALSE(queue.drain(std::chrono::milliseconds(50)));
  EXPECT_TRUE(this->names(key()).empty());
  tap->end(true);
  settle(queue);
  EXPECT_EQ(this->names(key()).size(), 3u);
  EXPECT_FALSE(tap->failed());
}

TEST(TapQueue, JobsBehindAHoldWaitUntilItEnds) {
  TapQueue queue(64u << 20, nullptr, std::chrono::minutes(1));
  const TapQueue::HoldId hold = queue.begin_hold();
  std::vector<int> order;
  ASSERT_TRUE(queue.post([&order] { order.push_back(1); }, 100, hold));
  queue.post_control([&order] { order.push_back(2); });
  EXPECT_FALSE(queue.drain(std::chrono::milliseconds(50)));
  EXPECT_TRUE(order.empty());
  queue.end_hold(hold);
  ASSERT_TRUE(queue.drain(std::chrono::seconds(10)));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(TapQueue, EveryHoldEndsOnceTheQueueIsHalfFull) {
  TapQueue queue(1000, nullptr, std::chrono::minutes(1));  // only the bytes can end the holds
  const TapQueue::HoldId first = queue.begin_hold(), second = queue.begin_hold();
  int done = 0;
  ASSERT_TRUE(queue.post([&done] { ++done; }, 300, first));
  ASSERT_TRUE(queue.post([&done] { ++done; }, 150, second));
  EXPECT_FALSE(queue.drain(std::chrono::milliseconds(50)));
  // 600 of 1000 bytes, in two lists: they are digested as they come, so the queue keeps room.
  ASSERT_TRUE(queue.post([&done] { ++done; }, 150, second));
  ASSERT_TRUE(queue.drain(std::chrono::seconds(10)));
  EXPECT_EQ(done, 3);
}

TEST(TapQueue, AHoldEndsAtItsLimit) {
  TapQueue queue(1000, nullptr, std::chrono::milliseconds(30));
  const TapQueue::HoldId hold = queue.begin_hold();  // never ended, as by a stalled list
  int done = 0;
  ASSERT_TRUE(queue.post([&done] { ++done; }, 100, hold));
  ASSERT_TRUE(queue.drain(std::chrono::seconds(10)));
  EXPECT_EQ(done, 1);
}

TEST(TapQueue, StoppingDigestsWhatAHoldKeeps) {
  int done = 0;
  {
    // Past ctest's timeout: only stopping can end the hold.
    TapQueue queue(64u << 20, nullptr, std::chrono::hours(1));
    ASSERT_TRUE(queue.post([&done] { ++done; }, 100, queue.begin_hold()));
  }
  EXPECT_EQ(done, 1);
}

TEST(TapQueue, DrainWaitsForEveryJobPostedBefore) {
  TapQueue queue;
  std::promise<void> gate;
  int done = 0;
  queue.post_control([g = gate.get_future().share()] { g.wait(); });
  queue.post_control([&done] { ++done; });
  EXPECT_FALSE(queue.idle());
  EXPECT_FALSE(queue.drain(std::chrono::milliseconds(20)));
  gate.set_value();
  ASSERT_TRUE(queue.drain(std::chrono::seconds(10)));
  EXPECT_EQ(done, 1);
  EXPECT_TRUE(queue.idle());
}

TEST(TapQueue, CaughtUpWaitsForTheJobsPostedBeforeItOnly) {
  TapQueue queue;
  test_support::Blocker before(queue);
  int done = 0;
  queue.post_control([&done] { ++done; });
  boost::asio::io_context io;
  auto caught_up =
      boost::asio::co_spawn(io, queue.caught_up(std::chrono::seconds(10)), boost::asio::use_future);
  io.poll();  // the coroutine has posted its marker and waits
  test_support::Blocker after(queue);
  before.release();
  io.run();
  EXPECT_TRUE(caught_up.get());
  EXPECT_EQ(done, 1);
  EXPECT_FALSE(queue.idle());  // what was posted after it still waits
}

TEST(TapQueue, CaughtUpGivesUpAtItsLimit) {
  TapQueue queue;
  test_support::Blocker blocker(queue);
  // Destroyed first: the marker runs after the io_context is gone (as when the hub stops with a
  // write waiting) and must not touch it (ASan found it posting to the freed io_context).
  boost::asio::io_context io;
  auto caught_up = boost::asio::co_spawn(io, queue.caught_up(std::chrono::milliseconds(20)),
                                         boost::asio::use_future);
  io.run();
  EXPECT_FALSE(caught_up.get());
}

}  // namespace
}  // namespace yurthub::cache
