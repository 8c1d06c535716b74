// Unit tests for the churn control (churn.h): its query, and the ConfigMap and EndpointSlice
// writes it makes (the objects, their count, the Services the slices belong to).
#include "test/fake_apiserver/churn.h"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace {

TEST(ChurnQuery, ReadsEveryParameterAndRefusesBadOnes) {
  auto request =
      parse_churn_query("objects=3&events=7&namespace=x&resource=endpointslices&endpoints=4");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->objects, 3);
  EXPECT_EQ(request->events, 7);
  EXPECT_EQ(request->namespace_name, "x");
  EXPECT_EQ(request->resource, "endpointslices");
  EXPECT_EQ(request->endpoints, 4);
  auto defaults = parse_churn_query("");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->resource, "configmaps");
  EXPECT_FALSE(parse_churn_query("objects=0"));
  EXPECT_FALSE(parse_churn_query("endpoints=x"));
  EXPECT_FALSE(parse_churn_query("resource=pods"));
}

// Runs a churn to its end on a private io_context.
void run_churn(Store& store, const std::string& query) {
  boost::asio::io_context io;
  start_churn(io.get_executor(), store, *parse_churn_query(query));
  io.run();
}

TEST(Churn, UpdatesConfigMapsInRoundRobin) {
  Store store(100000);
  const std::uint64_t before = store.current_rv();
  run_churn(store, "objects=2&events=5&namespace=ns");
  EXPECT_EQ(store.current_rv(), before + 5);
  const StoredObject* last = store.get(find_resource("", "v1", "configmaps")->key(), "ns", "c-0");
  ASSERT_NE(last, nullptr);
  auto doc = parse_json(*last->json);
  EXPECT_STREQ((*doc)["data"]["seq"].GetString(), "4");  // writes 0, 2 and 4 went to c-0
}

TEST(Churn, WritesEndpointSlicesOfTheirServices) {
  Store store(100000);
  run_churn(store, "objects=2&events=4&namespace=ns&resource=endpointslices&endpoints=3");
  const StoredObject* service =
      store.get(find_resource("", "v1", "services")->key(), "ns", "svc-1");
  ASSERT_NE(service, nullptr);
  EXPECT_NE(service->json->find(R"("openyurt.io/topologyKeys":"kubernetes.io/hostname")"),
            std::string::npos);
  const StoredObject* slice =
      store.get(find_resource("discovery.k8s.io", "v1", "endpointslices")->key(), "ns", "svc-1");
  ASSERT_NE(slice, nullptr);
  auto doc = parse_json(*slice->json);
  EXPECT_STREQ((*doc)["metadata"]["labels"]["kubernetes.io/service-name"].GetString(), "svc-1");
  ASSERT_EQ((*doc)["endpoints"].Size(), 3u);
  // The last write to svc-1 was seq 3: its endpoints sit on nodes 4, 5 and 6.
  EXPECT_STREQ((*doc)["endpoints"][0]["nodeName"].GetString(), "edge-node-4");
  EXPECT_STREQ((*doc)["endpoints"][2]["nodeName"].GetString(), "edge-node-6");
}

}  // namespace
}  // namespace yurthub::fake
