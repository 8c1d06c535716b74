// The fixture of offline_writes_test.cc and offline_writes_journal_test.cc: OfflineWrites over a
// real LMDB store with its journal, node authority, tokens and callers, and the kubelet requests
// they send. Header-only; test/cache only.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "cache/cache_policy.h"
#include "cache/journal.h"
#include "cache/local_events.h"
#include "cache/offline_writes.h"
#include "cache/response_taps.h"
#include "kube/bearer_token.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache::test_support {

inline constexpr const char* kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
    R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web"}},"spec":{"nodeName":"edge-node-1"},)"
    R"("status":{"phase":"Pending","podIP":"10.0.0.5"}})";
inline constexpr const char* kLease =
    R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-node-1",)"
    R"("namespace":"kube-node-lease","uid":"l-1","resourceVersion":"41"},)"
    R"("spec":{"holderIdentity":"edge-node-1","renewTime":"2026-01-01T00:00:00.000000Z"}})";

inline rapidjson::Document parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

// As kubelet sends it: from root on the node (the session's RequestInfo::privileged_peer).
inline kube::RequestInfo request(const char* method, const std::string& target,
                                 const char* agent = "kubelet/v1.32.4") {
  auto info = kube::classify_request(method, target, agent);
  info.privileged_peer = true;
  return info;
}

inline constexpr const char* kTestOp = R"({"op":"test","path":"/kind","value":"Pod"})";
// Each copies metadata.labels into itself, doubling it.
inline const std::string kCopyLabels =
    R"({"op":"copy","from":"/metadata/labels","path":"/metadata/labels/l)";

// A JSON patch of `count` operations, `op(i)` each.
template <class Op>
std::string many_ops(int count, Op op) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) out += (i ? "," : "") + op(i);
  return out + "]";
}

// A file of test/testdata/protobuf, as bytes.
inline std::string protobuf_fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class OfflineWritesTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    set_limits(JournalLimits{});
  }
  void set_limits(JournalLimits limits, const std::string& node = "edge-node-1") {
    writes_.reset();
    callers_.reset();
    tokens_.reset();
    journal_.reset();
    journal_registry_ = std::make_unique<base::MetricsRegistry>();
    journal_ = std::make_unique<Journal>(*journal_registry_, limits);
    authority_ = std::make_unique<NodeAuthority>(node);
    tokens_ = std::make_unique<TokenKeeper>(*store_, *writer_, *journal_registry_,
                                            [this] { return now_; });
    callers_ =
        std::make_unique<Callers>(*store_, *writer_, *journal_registry_,
                                  "a test key of thirty-two bytes!!", [this] { return now_; });
    writes_ = std::make_unique<OfflineWrites>(*writer_, *store_, *journal_, events_, policy_,
                                              *metrics_, *tokens_, *callers_, authority_.get());
  }
  std::string journal_metrics() { return journal_registry_->render(); }
  void TearDown() override {
    writes_.reset();
    callers_.reset();
    tokens_.reset();
    StoreFixture::TearDown();
  }
  // The request as the session classifies it: with `authorization`, the caller's own token.
  kube::RequestInfo as_caller(const char* method, const std::string& target, const char* agent,
                              std::string_view authorization) {
    auto info = request(method, target, agent);
    if (!authorization.empty())
      info.bearer_token = std::string(kube::bearer_token(authorization).value_or(""));
    return info;
  }
  // Caches `json` as the answer to a GET of `target` by `agent`; with `authorization`, as the
  // answer to that caller's own token (which the apiserver thereby accepted).
  void cache_get(const std::string& target, const std::string& json,
                 const char* agent = "kubelet/v1.32.4", std::string_view authorization = "") {
    const auto info = as_caller("GET", target, agent, authorization);
    auto id = policy_.identity(info);
    ASSERT_TRUE(id);
    id->owner = callers_->owner_of(info);
    if (info.bearer_token) callers_->accepted(info);
    auto tap = make_object_tap(*writer_, *metrics_, *id);
    tap->body(json);
    tap->end(true);
    writer_->flush();
  }
  // A write as `agent` makes it; with `authorization`, under the caller's own token instead of
  // the hub's (the node's) credentials.
  RecordingWriter write(const char* method, const std::string& target,
                        const std::string& content_type, std::string body,
                        const char* agent = "kubelet/v1.32.4", const char* authorization = "",
                        bool privileged_peer = true) {
    auto info = as_caller(method, target, agent, authorization);
    info.privileged_peer = privileged_peer;
    EXPECT_TRUE(writes_->handles(info)) << method << " " << target;
    hub::OfflineWrite w{method, target, content_type, agent, authorization, std::move(body)};
    RecordingWriter out;
    run(writes_->serve(info, w, out));
    return out;
  }
  std::vector<JournalEntry> journaled() {
    std::vector<JournalEntry> out;
    store_->read()->scan_journal([&](std::uint64_t seq, std::string_view bytes) {
      auto entry = decode_journal_entry(seq, bytes);
      EXPECT_TRUE(entry) << bytes;
      if (entry) out.push_back(*entry);
      return true;
    });
    return out;
  }
  // web-0 as kubelet's get set holds it: the node's, or with `authorization`, that caller's.
  std::string kubelet_pod(std::string_view authorization = "") {
    const auto info =
        as_caller("GET", "/api/v1/namespaces/default/pods/web-0", "kubelet/v1.32.4", authorization);
    auto id = policy_.identity(info);
    id->owner = callers_->owner_of(info);
    return object_json(id->key(), "default", "web-0").value_or("");
  }

  std::unique_ptr<base::MetricsRegistry> journal_registry_;
  CachePolicy policy_;
  LocalEvents events_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<NodeAuthority> authority_;
  std::unique_ptr<TokenKeeper> tokens_;
  std::unique_ptr<Callers> callers_;
  std::int64_t now_ = 1795428000;  // 2026-11-23T10:00:00Z
  std::unique_ptr<OfflineWrites> writes_;
};

}  // namespace yurthub::cache::test_support
