// object_meta(): the SAX metadata reader the taps use on every cached object.
#include "kube/object_meta.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace yurthub::kube {
namespace {

TEST(ObjectMeta, ReadsNameNamespaceAndResourceVersion) {
  auto meta = object_meta(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
      R"("labels":{"name":"not-this"},"resourceVersion":"229"},"spec":{"nodeName":"n"}})");
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->name, "web-0");
  EXPECT_EQ(meta->namespace_name, "default");
  EXPECT_EQ(meta->resource_version, 229u);
}

TEST(ObjectMeta, ClusterScopedBookmarkAndBadInput) {
  auto node = object_meta(R"({"metadata":{"resourceVersion":"7","name":"edge-1"}})");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->namespace_name, "");
  auto bookmark = object_meta(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"233","creationTimestamp":null}})");
  ASSERT_TRUE(bookmark);
  EXPECT_EQ(bookmark->name, "");
  EXPECT_EQ(bookmark->resource_version, 233u);
  EXPECT_FALSE(object_meta("not json").has_value());
  EXPECT_FALSE(object_meta(R"({"kind":"Status"})").has_value());
  EXPECT_FALSE(object_meta(R"({"metadata":{"name":"x")").has_value());  // cut before metadata ends
  EXPECT_EQ(object_meta(R"({"metadata":{"name":"x","resourceVersion":"12a"}})")->resource_version,
            0u);
}

TEST(ObjectMeta, DeepNestingBeforeMetadataIsNoObjectNotAStackOverflow) {
  const std::string deep = std::string(1u << 20, '[');
  EXPECT_FALSE(object_meta(R"({"spec":)" + deep).has_value());
  // Metadata first: read before the nesting starts, as the apiserver orders its members.
  auto meta = object_meta(R"({"metadata":{"name":"x"},"spec":)" + deep);
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->name, "x");
}

TEST(ObjectMeta, EveryPodOfTheFixtureList) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) +
                   "/fixtures/apiserver-v1.26/pods-watch.stream");
  std::string line;
  int events = 0;
  while (std::getline(in, line)) {
    // The object of each event: everything after "object":
    auto at = line.find("\"object\":");
    ASSERT_NE(at, std::string::npos);
    auto meta = object_meta(std::string_view(line).substr(at + 9, line.size() - at - 10));
    ASSERT_TRUE(meta) << line.substr(0, 80);
    EXPECT_GE(meta->resource_version, 230u);
    ++events;
  }
  EXPECT_EQ(events, 5);
}

TEST(ObjectMeta, StopsOnceNameNamespaceAndResourceVersionAreRead) {
  // What follows the three in the apiserver's order (labels, annotations, managedFields) is not
  // read: here it is not even JSON.
  auto pod =
      object_meta(R"({"metadata":{"name":"web-0","namespace":"default","resourceVersion":"9",)"
                  R"("managedFields":[{"manager":"kubelet", not json)");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->name, "web-0");
  EXPECT_EQ(pod->namespace_name, "default");
  EXPECT_EQ(pod->resource_version, 9u);
  // In another order the three are still all read, whatever comes between them.
  auto other =
      object_meta(R"({"metadata":{"resourceVersion":"10","labels":{"namespace":"no"},"name":"a",)"
                  R"("annotations":{"name":"no"},"namespace":"ns"}})");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->name, "a");
  EXPECT_EQ(other->namespace_name, "ns");
  EXPECT_EQ(other->resource_version, 10u);
  // Without a namespace (cluster-scoped) metadata is read to its end.
  EXPECT_FALSE(object_meta(R"({"metadata":{"name":"n","resourceVersion":"1","labels":{)"));
}

TEST(ObjectMeta, MetadataPastTheFirstKilobyteOrAcrossItIsStillRead) {
  // The head is parsed first; what it cuts off is read from the whole object.
  for (std::size_t pad : {900u, 980u, 1000u, 1010u, 1020u, 1030u, 3000u}) {
    const std::string json = R"({"kind":"Pod","spec":{"note":")" + std::string(pad, 'x') +
                             R"("},"metadata":{"name":"web-0","namespace":"default",)"
                             R"("labels":{"a":"b"},"resourceVersion":"12345"}})";
    auto meta = object_meta(json);
    ASSERT_TRUE(meta) << pad;
    EXPECT_EQ(meta->name, "web-0") << pad;
    EXPECT_EQ(meta->namespace_name, "default") << pad;
    EXPECT_EQ(meta->resource_version, 12345u) << pad;
  }
  // A long name that starts in the head and ends past it is read whole.
  const std::string name(2000, 'n');
  auto long_name = object_meta(R"({"metadata":{"name":")" + name +
                               R"(","namespace":"d","resourceVersion":"3"}})");
  ASSERT_TRUE(long_name);
  EXPECT_EQ(long_name->name, name);
  // Malformed past the head, before metadata ends: still no metadata.
  EXPECT_FALSE(object_meta(R"({"metadata":{"name":"a","labels":{"k":")" + std::string(2000, 'v') +
                           R"(" oops}})"));
}

}  // namespace
}  // namespace yurthub::kube
