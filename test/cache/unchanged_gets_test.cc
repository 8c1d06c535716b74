// UnchangedGets (cache/unchanged_gets.h) and the GET taps that read it: an answer the same as what
// the cache holds is not queued again, and anything else that writes the object (an offline
// write, a write's kept answer) makes the next answer stored again, byte for byte.
#include "cache/unchanged_gets.h"

#include <gtest/gtest.h>

#include "cache/list_identity.h"
#include "cache/response_taps.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

TEST(UnchangedGets, RemembersExactlyWhatWasStoredUntilForgotten) {
  UnchangedGets gets;
  const std::string pod = UnchangedGets::key("set", "default", "web-0");
  EXPECT_FALSE(gets.unchanged(pod, "{}"));
  gets.stored(pod, R"({"v":1})");
  EXPECT_TRUE(gets.unchanged(pod, R"({"v":1})"));
  EXPECT_FALSE(gets.unchanged(pod, R"({"v":2})"));
  EXPECT_FALSE(gets.unchanged(pod, R"({"v":1} )"));
  EXPECT_FALSE(gets.unchanged(UnchangedGets::key("set", "default", "web-1"), R"({"v":1})"));
  EXPECT_FALSE(gets.unchanged(UnchangedGets::key("set", "", "defaultweb-0"), R"({"v":1})"));
  gets.stored(pod, R"({"v":2})");
  EXPECT_TRUE(gets.unchanged(pod, R"({"v":2})"));
  gets.forget(pod);
  EXPECT_FALSE(gets.unchanged(pod, R"({"v":2})"));
  gets.stored(pod, R"({"v":3})");
  gets.forget_all();
  EXPECT_EQ(gets.size(), 0u);
}

TEST(UnchangedGets, BoundedPerObjectAndInAll) {
  UnchangedGets gets;
  const std::string big(UnchangedGets::kMaxObjectBytes + 1, 'x');
  gets.stored("big", big);
  EXPECT_FALSE(gets.unchanged("big", big));
  const std::string object(UnchangedGets::kMaxObjectBytes, 'y');
  const std::size_t fit = UnchangedGets::kMaxBytes / (object.size() + 8);
  for (std::size_t i = 0; i < fit; ++i) gets.stored("object" + std::to_string(100 + i), object);
  EXPECT_EQ(gets.size(), fit);
  gets.stored("object-next", object);  // past the bound: starts over
  EXPECT_EQ(gets.size(), 1u);
  EXPECT_TRUE(gets.unchanged("object-next", object));
}

class GetTapTest : public StoreFixture {
 protected:
  const std::string gets_ = ListIdentity{"kubelet", "", "v1", "pods", "", "", ""}.get_set().key();

  static std::string pod(int version) {
    return R"({"kind":"Pod","metadata":{"name":"web-0","namespace":"default",)"
           R"("resourceVersion":"7"},"spec":{"v":)" +
           std::to_string(version) + "}}";
  }
  void get(const std::string& body) {
    auto tap = make_get_tap(*writer_, *metrics_, gets_, "default", "web-0");
    tap->body(body);
    tap->end(true);
    writer_->flush();
  }
  std::uint64_t ops() { return metrics_->ops.with({}).value(); }
};

TEST_F(GetTapTest, AGetAnsweredTheSameAgainIsNotQueued) {
  get(pod(1));
  const std::uint64_t after_first = ops();
  EXPECT_EQ(after_first, 1u);
  get(pod(1));
  EXPECT_EQ(ops(), after_first);
  EXPECT_EQ(*object_json(gets_, "default", "web-0"), pod(1));
  get(pod(2));  // other bytes: stored
  EXPECT_EQ(ops(), after_first + 1);
  EXPECT_EQ(*object_json(gets_, "default", "web-0"), pod(2));
}

TEST_F(GetTapTest, AnOfflineWriteMakesTheSameAnswerStoredAgain) {
  get(pod(1));
  // An offline write edits the cached pod, keeping its resourceVersion.
  writer_->run_exclusive(
      [&](WriteTxn& txn) -> Status {
        auto record = txn.list(gets_);
        if (!record) return make_error("no get set");
        return txn.put_object(record->set_id, "default", "web-0", 7, pod(9));
      },
      [](const Status& s) { EXPECT_TRUE(s.ok()); });
  writer_->wait_tasks();
  EXPECT_EQ(*object_json(gets_, "default", "web-0"), pod(9));
  get(pod(1));  // the apiserver's answer wins over the offline edit
  EXPECT_EQ(*object_json(gets_, "default", "web-0"), pod(1));
}

TEST_F(GetTapTest, AnotherWriterOfTheObjectMakesTheSameAnswerStoredAgain) {
  get(pod(1));
  // A write's kept answer lands in the same get set (NodeCache::kept_answer_tap).
  auto kept = make_object_tap(*writer_, *metrics_, gets_);
  kept->body(pod(5));
  kept->end(true);
  writer_->flush();
  EXPECT_EQ(*object_json(gets_, "default", "web-0"), pod(5));
  get(pod(1));
  EXPECT_EQ(*object_json(gets_, "default", "web-0"), pod(1));
}

}  // namespace
}  // namespace yurthub::cache
