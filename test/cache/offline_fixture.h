// The offline tests' fixture (offline_test.cc, streaming_list_test.cc): real apiserver bodies
// (fixtures) fed through the response taps in arbitrary pieces into the writer and the LMDB
// store, then read back through the LocalProxy as a client would while offline.
#pragma once

#include <fstream>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "base/clock.h"
#include "cache/cache_policy.h"
#include "cache/local_proxy.h"
#include "cache/response_taps.h"
#include "test/base/json_test_support.h"
#include "test/base/watch_events.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache::offline_testing {

using ::yurthub::test_support::parse_json;

using ::testing::HasSubstr;
using namespace yurthub::cache::test_support;

inline std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/fixtures/apiserver-v1.26/" + name);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline kube::RequestInfo kubelet(const char* method, const char* target) {
  return kube::classify_request(method, target, "kubelet/v1.32.4 (linux/amd64) kubernetes/abc");
}

// Feeds a body in random pieces (1 byte to 4 KiB), as the network would.
inline void feed(hub::ResponseTap& tap, const std::string& body, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t n = std::min<std::size_t>(body.size() - at, 1 + rng() % 4096);
    tap.body(std::string_view(body).substr(at, n));
    at += n;
  }
}

// A complete PodList of minimal pods labelled app=web, one per name.
inline std::string pod_list(const std::vector<std::string>& names, int rv) {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" +
                    std::to_string(rv) + R"("},"items":[)";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i ? "," : "") + std::string(R"({"metadata":{"name":")") + names[i] +
           R"(","namespace":"default","resourceVersion":")" + std::to_string(rv) +
           R"(","labels":{"app":"web"}},"spec":{"nodeName":"edge-node-1"}})";
  }
  return out + "]}";
}

class OfflineTest : public StoreFixture {
 protected:
  // Caches one response to `target` as kubelet would have received it online.
  void cache(const char* target, const std::string& body) {
    auto info = kubelet("GET", target);
    auto id = policy_.identity(info);
    ASSERT_TRUE(id);
    std::unique_ptr<hub::ResponseTap> tap;
    if (info.verb == kube::Verb::List)
      tap = make_list_tap(*writer_, *metrics_, *id, info);
    else if (info.verb == kube::Verb::Watch)
      tap = make_watch_tap(*writer_, *metrics_, *id, info, false);
    else
      tap = make_object_tap(*writer_, *metrics_, *id);
    if (info.verb == kube::Verb::Watch) {  // the hub frames a watch and feeds its events
      EXPECT_TRUE(yurthub::test_support::for_each_watch_event(
          body, 4096, [&](std::string_view raw) { tap->event(raw); }, [&] { tap->events_done(); }));
    } else {
      feed(*tap, body);
    }
    tap->end(true);
    EXPECT_FALSE(tap->failed());
    writer_->flush();
  }
  RecordingWriter serve(const char* target,
                        std::function<std::optional<hub::StreamEnd>(int)> on_wait = {}) {
    auto info = kubelet("GET", target);
    RecordingWriter out;
    if (on_wait) out.on_wait = std::move(on_wait);
    LocalProxy proxy(*store_, *metrics_, events_,
                     {std::chrono::seconds(1800), std::chrono::seconds(60), 1024});
    run(proxy.serve(info, policy_.identity(info), out));
    return out;
  }
  CachePolicy policy_;
  LocalEvents events_;
};

}  // namespace yurthub::cache::offline_testing
