// Tests for filters/node_port_isolation.cc: the `nodeport.openyurt.io/listen` decision for this
// node's pool (name, `-name`, `*`, precedence, spaces, unlisted), only for NodePort and
// LoadBalancer Services, nodes in no pool keeping everything, odd shapes kept; ready() and
// handles().
#include "filters/node_port_isolation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

// A Service shaped like the v1.26 fixtures; `listen` is the raw JSON of the annotation's value
// (empty: no annotation).
std::string service(const std::string& type, const std::string& listen,
                    const std::string& head = "") {
  std::string annotations =
      listen.empty() ? "{}" : R"({"nodeport.openyurt.io/listen":)" + listen + "}";
  return "{" + head + R"("metadata":{"name":"web","namespace":"default","annotations":)" +
         annotations +
         R"(},"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080,)"
         R"("nodePort":30080}],"selector":{"app":"web"},"clusterIP":"10.99.207.174","type":")" +
         type + R"("}})";
}

std::string node_port(const std::string& listen) {
  return service("NodePort", "\"" + listen + "\"");
}

TEST(NodePortIsolationFilter, Apply) {
  auto filter = make_node_port_isolation_filter();
  auto no_pool = [](ClusterView& v) {
    v.pool_name.clear();
    v.pool_known = false;
  };
  const std::vector<ApplyCase> cases = {
      // This node's pool is pool-a (base_view()).
      {"own pool listed", node_port("pool-a"), {}, Verdict::Keep, ""},
      {"other pool only", node_port("pool-b"), {}, Verdict::Drop, ""},
      {"list with spaces", node_port("pool-b, pool-a"), {}, Verdict::Keep, ""},
      {"surrounding spaces", node_port("  pool-a  "), {}, Verdict::Keep, ""},
      {"own pool excluded", node_port("-pool-a"), {}, Verdict::Drop, ""},
      {"wildcard", node_port("*"), {}, Verdict::Keep, ""},
      {"wildcard minus own pool", node_port("*,-pool-a"), {}, Verdict::Drop, ""},
      {"own name beats its exclusion", node_port("-pool-a,pool-a"), {}, Verdict::Keep, ""},
      {"other pool excluded, no wildcard", node_port("-pool-b"), {}, Verdict::Drop, ""},
      {"other pool excluded, wildcard", node_port("-pool-b , *"), {}, Verdict::Keep, ""},
      {"empty value", node_port(""), {}, Verdict::Drop, ""},
      {"no prefix match", node_port("pool,pool-aa,-pool"), {}, Verdict::Drop, ""},
      {"LoadBalancer", service("LoadBalancer", "\"pool-b\""), {}, Verdict::Drop, ""},
      {"LoadBalancer listed", service("LoadBalancer", "\"pool-a\""), {}, Verdict::Keep, ""},
      {"watch object",
       service("NodePort", "\"pool-b\"", R"("kind":"Service","apiVersion":"v1",)"),
       {},
       Verdict::Drop,
       ""},
      {"ClusterIP ignores the annotation",
       service("ClusterIP", "\"pool-b\""),
       {},
       Verdict::Keep,
       ""},
      {"no annotation", service("NodePort", ""), {}, Verdict::Keep, ""},
      {"node in no pool", node_port("pool-b"), no_pool, Verdict::Keep, ""},
      {"NodePool unknown: decided by name", node_port("pool-b"),
       [](ClusterView& v) { v.pool_known = false; }, Verdict::Drop, ""},
      {"annotation not a string", service("NodePort", "false"), {}, Verdict::Keep, ""},
      {"type not a string",
       R"({"metadata":{"name":"web","namespace":"default","annotations":)"
       R"({"nodeport.openyurt.io/listen":"pool-b"}},"spec":{"type":1}})",
       {},
       Verdict::Keep,
       ""},
      {"spec missing",
       R"({"metadata":{"name":"web","namespace":"default","annotations":)"
       R"({"nodeport.openyurt.io/listen":"pool-b"}}})",
       {},
       Verdict::Keep,
       ""},
      {"not an object", "7", {}, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

TEST(NodePortIsolationFilter, AlwaysReady) {
  auto filter = make_node_port_isolation_filter();
  EXPECT_TRUE(filter->ready(ClusterView{}));
  EXPECT_FALSE(filter->reactive());
  EXPECT_EQ(filter->name(), "nodeportisolation");
}

TEST(NodePortIsolationFilter, Handles) {
  auto filter = make_node_port_isolation_filter();
  test_support::expect_handles(*filter,
                               {
                                   {"GET", "/api/v1/services", true},
                                   {"GET", "/api/v1/services?watch=true", true},
                                   {"GET", "/api/v1/namespaces/default/services/web", false},
                                   {"GET", "/api/v1/nodes", false},
                                   {"GET", "/apis/apps/v1/services", false},
                               });
}

}  // namespace
}  // namespace yurthub::filters
