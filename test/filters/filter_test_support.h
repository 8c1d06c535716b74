// Shared helpers for the per-filter unit tests (test/filters/*_test.cc): JSON parsing and
// printing, a ClusterView for node edge-node-1 in pool pool-a, requests classified the way the
// proxy session does it, and a runner for table-driven apply() cases that checks the verdict,
// the resulting object, and that Keep/Drop leave the object untouched.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "filters/filter.h"
#include "kube/request_info.h"
#include "test/base/json_test_support.h"

namespace yurthub::filters::test_support {

// JSON read and written the hub's own way (test/base/json_test_support.h).
using ::yurthub::test_support::parse_json;
using ::yurthub::test_support::to_json;

// Services keyed "namespace/name", as the FilterManager publishes them.
inline net::ObjectSnapshot services_from(const std::vector<std::string>& services) {
  auto map = std::make_shared<net::ObjectMap>();
  for (const std::string& text : services) {
    auto doc = std::make_shared<rapidjson::Document>();
    doc->Parse(text.data(), text.size());
    EXPECT_FALSE(doc->HasParseError()) << "bad test JSON: " << text;
    const auto& metadata = (*doc)["metadata"];
    std::string key =
        std::string(metadata["namespace"].GetString()) + "/" + metadata["name"].GetString();
    (*map)[key] = std::move(doc);
  }
  return map;
}

// Node edge-node-1 in pool pool-a (edge-node-1, edge-node-3), everything synced, hub at
// 169.254.2.1:10268, no Services.
inline ClusterView base_view() {
  ClusterView view;
  view.node_name = "edge-node-1";
  view.pool_name = "pool-a";
  view.pool_known = true;
  view.pool_nodes = {"edge-node-1", "edge-node-3"};
  view.services = std::make_shared<net::ObjectMap>();
  view.hub_host = "169.254.2.1";
  view.hub_port = 10268;
  view.node_synced = view.pools_synced = view.services_synced = true;
  return view;
}

// A request as the proxy session classifies it, e.g. request("GET", "/api/v1/services?watch=1").
inline kube::RequestInfo request(std::string_view method, std::string_view target) {
  return kube::classify_request(method, target, "kube-proxy/v1.26.0 (linux/amd64)");
}

struct HandlesCase {
  std::string method;
  std::string target;
  bool handled;
};

// Checks handles() on each case, and that every handled request stops being handled once it
// names a subresource (classify_request never yields a list/watch of one, so it is set here).
inline void expect_handles(const ObjectFilter& filter, const std::vector<HandlesCase>& cases) {
  for (const HandlesCase& c : cases) {
    kube::RequestInfo info = request(c.method, c.target);
    EXPECT_EQ(filter.handles(info), c.handled)
        << filter.name() << ": " << c.method << " " << c.target;
    if (!c.handled) continue;
    info.subresource = "status";
    EXPECT_FALSE(filter.handles(info)) << filter.name() << ": " << c.target << " (status)";
  }
}

// One apply() case. `expected` is the object after a Modified verdict; it must be empty for Keep
// and Drop, which must leave the object exactly as it was (the chain sends the original object
// in the DELETED event of a drop).
struct ApplyCase {
  std::string name;
  std::string input;
  std::function<void(ClusterView&)> tweak;  // may be empty: base_view() as is
  Verdict verdict;
  std::string expected;
};

// The masterservice family (masterservice, forwardkubesvctraffic, serviceenvupdater): ready only
// once the hub's in-cluster address is known, never reactive, and named `name`.
inline void expect_ready_only_with_hub_host(const ObjectFilter& filter, std::string_view name) {
  ClusterView view = base_view();
  EXPECT_TRUE(filter.ready(view));
  view.hub_host.clear();
  EXPECT_FALSE(filter.ready(view));
  EXPECT_FALSE(filter.reactive());
  EXPECT_EQ(filter.name(), name);
}

inline const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Keep:
      return "Keep";
    case Verdict::Modified:
      return "Modified";
    case Verdict::Drop:
      return "Drop";
  }
  return "?";
}

inline void run_apply_cases(const ObjectFilter& filter, const std::vector<ApplyCase>& cases) {
  for (const ApplyCase& c : cases) {
    SCOPED_TRACE(c.name);
    ClusterView view = base_view();
    if (c.tweak) c.tweak(view);
    rapidjson::Document doc = parse_json(c.input);
    const rapidjson::Document original = parse_json(c.input);
    Verdict verdict = filter.apply(doc, doc.GetAllocator(), view);
    EXPECT_EQ(verdict_name(verdict), std::string(verdict_name(c.verdict)));
    if (c.verdict == Verdict::Modified) {
      rapidjson::Document expected = parse_json(c.expected);
      EXPECT_TRUE(doc == expected)
          << "got      " << to_json(doc) << "\nexpected " << to_json(expected);
    } else {
      EXPECT_TRUE(c.expected.empty()) << "expected JSON is only for Modified cases";
      EXPECT_TRUE(doc == original) << "object changed: " << to_json(doc);
    }
  }
}

}  // namespace yurthub::filters::test_support
