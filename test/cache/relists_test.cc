// Relists, on a real store: a relist writes only what changed, names what it kept, and its finish
// leaves the current set exactly the list, however many objects changed.
#include "cache/relists.h"

#include <map>

#include <gtest/gtest.h>

#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using test_support::StoreFixture;

class RelistsTest : public StoreFixture {
 protected:
  // Sets 1 (current) and 2 (staging), the current one holding `count` objects at version 1.
  void SetUp() override {
    StoreFixture::SetUp();
    ASSERT_TRUE(store_->write([&](WriteTxn& txn) -> Status {
      for (int i = 0; i < kCount; ++i) {
        if (Status s = txn.put_object(kCurrent, "ns", name(i), 1, json(i, 1)); !s) return s;
      }
      return {};
    }));
  }
  static std::string name(int i) { return "pod-" + std::to_string(1000 + i); }
  static std::string json(int i, int version) {
    return R"({"n":)" + std::to_string(i) + R"(,"v":)" + std::to_string(version) + "}";
  }
  std::map<std::string, std::string> set_contents(std::uint32_t set) {
    std::map<std::string, std::string> out;
    store_->read()->scan(set, "", "", "",
                         [&](std::string_view, std::string_view n, const StoredObject& object) {
                           out.emplace(n, object.json);
                           return true;
                         });
    return out;
  }

  static constexpr int kCount = 700;
  static constexpr std::uint32_t kCurrent = 1;
  static constexpr std::uint32_t kStaging = 2;
};

// Every object changed, 600 of them copied onto the set, and the last 100 gone.
TEST_F(RelistsTest, ARelistOfEveryObjectChangedLeavesExactlyTheList) {
  Relists relists(*metrics_);
  relists.begin(kStaging, kCurrent);
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) -> Status {
    for (int i = 0; i < kCount - 100; ++i) {
      if (Status s = relists.put(txn, kStaging, "ns", name(i), 2, json(i, 2)); !s) return s;
    }
    return {};
  }));
  EXPECT_EQ(set_contents(kCurrent).size(), std::size_t{kCount});  // untouched until finish
  EXPECT_EQ(set_contents(kStaging).size(), std::size_t{kCount - 100});
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) { return relists.finish(txn, kStaging); }));
  auto current = set_contents(kCurrent);
  ASSERT_EQ(current.size(), std::size_t{kCount - 100});
  for (int i = 0; i < kCount - 100; ++i) EXPECT_EQ(current[name(i)], json(i, 2)) << i;
  EXPECT_TRUE(set_contents(kStaging).empty());
  EXPECT_FALSE(relists.diffs(kStaging));
  EXPECT_EQ(metrics_->relisted_objects.with({"written"}).value(), std::uint64_t{kCount - 100});
  EXPECT_EQ(metrics_->relisted_objects.with({"removed"}).value(), 100u);
}

TEST_F(RelistsTest, UnchangedObjectsAreOnlyNamed) {
  Relists relists(*metrics_);
  relists.begin(kStaging, kCurrent);
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) -> Status {
    for (int i = 0; i < kCount; ++i) {
      const int version = i == 5 ? 2 : 1;
      if (Status s = relists.put(txn, kStaging, "ns", name(i), version, json(i, version)); !s)
        return s;
    }
    return {};
  }));
  auto staged = set_contents(kStaging);
  ASSERT_EQ(staged.size(), 1u);  // only the changed one
  EXPECT_EQ(staged.begin()->first, name(5));
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) { return relists.finish(txn, kStaging); }));
  auto current = set_contents(kCurrent);
  EXPECT_EQ(current.size(), std::size_t{kCount});
  EXPECT_EQ(current[name(5)], json(5, 2));
  EXPECT_EQ(metrics_->relisted_objects.with({"unchanged"}).value(), std::uint64_t{kCount - 1});
  EXPECT_EQ(metrics_->relisted_objects.with({"removed"}).value(), 0u);
}

// The apiserver lists in key order, but nothing here may rely on it: every other item, listed
// from the last back to the first, and one in a namespace the current set does not have.
TEST_F(RelistsTest, ItemsListedInAnyOrderKeepExactlyTheNamedOnes) {
  Relists relists(*metrics_);
  relists.begin(kStaging, kCurrent);
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) -> Status {
    for (int i = kCount - 1; i >= 0; i -= 2) {
      if (Status s = relists.put(txn, kStaging, "ns", name(i), 1, json(i, 1)); !s) return s;
    }
    return relists.put(txn, kStaging, "a-namespace", name(0), 1, json(0, 1));
  }));
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) { return relists.finish(txn, kStaging); }));
  auto current = set_contents(kCurrent);
  ASSERT_EQ(current.size(), std::size_t{kCount / 2 + 1});
  for (int i = 1; i < kCount; i += 2) EXPECT_EQ(current.count(name(i)), 1u) << i;
  EXPECT_EQ(current.count(name(0)), 1u);  // a-namespace's: ns's pod-1000 was not listed
  EXPECT_EQ(metrics_->relisted_objects.with({"unchanged"}).value(), std::uint64_t{kCount / 2});
  EXPECT_EQ(metrics_->relisted_objects.with({"written"}).value(), 1u);
  EXPECT_EQ(metrics_->relisted_objects.with({"removed"}).value(), std::uint64_t{kCount / 2});
}

TEST_F(RelistsTest, ASetThatIsNotARelistIsWrittenWhole) {
  Relists relists(*metrics_);
  ASSERT_TRUE(store_->write(
      [&](WriteTxn& txn) { return relists.put(txn, kStaging, "ns", name(0), 1, json(0, 1)); }));
  EXPECT_EQ(set_contents(kStaging).size(), 1u);
  EXPECT_EQ(relists.current(kStaging), 0u);
}

}  // namespace
}  // namespace yurthub::cache
