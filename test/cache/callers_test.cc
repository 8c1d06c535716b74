// Callers (cache/callers.h): whose credential a request carries, through a real LMDB store. What
// a token obtained online belongs to (the node, a service account, one opaque token), and what an
// offline caller gets: the node's data without a token, its own owner's with a token the
// apiserver accepted or issued, a Status for any other token, an expired one, or one whose pod
// is gone; remembered across a restart.
#include "cache/callers.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "base/base64.h"
#include "cache/cache_policy.h"
#include "cache/response_taps.h"
#include "kube/request_info.h"
#include "test/cache/cache_test_support.h"
#include "test/kube/token_signer.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

std::string jwt(const std::string& payload) {
  return base::encode_base64url(R"({"alg":"RS256"})") + "." + base::encode_base64url(payload) +
         ".c2ln";
}

// kube-proxy's projected token, bound to its pod, valid until `exp`.
std::string proxy_token(std::int64_t exp, const std::string& pod_uid = "p-1") {
  return jwt(R"({"exp":)" + std::to_string(exp) +
             R"(,"kubernetes.io":{"namespace":"kube-system","pod":{"name":"kube-proxy-x","uid":")" +
             pod_uid + R"("},"serviceaccount":{"name":"kube-proxy","uid":"s-1"}}})");
}

kube::RequestInfo request(std::optional<std::string> token) {
  auto info = kube::classify_request("GET", "/api/v1/services", "kube-proxy/v1.26.1");
  info.bearer_token = std::move(token);
  return info;
}

class CallersTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    auto key = Callers::load_key(*store_);
    ASSERT_TRUE(key) << key.error().message;
    key_ = *key;
    restart();
  }
  void TearDown() override {
    callers_.reset();
    StoreFixture::TearDown();
  }
  // A new Callers on the same store, as after the hub restarted.
  void restart() {
    writer_->wait_tasks();
    callers_.reset();
    callers_registry_ = std::make_unique<base::MetricsRegistry>();  // a new process's
    callers_ = std::make_unique<Callers>(*store_, *writer_, *callers_registry_, key_,
                                         [this] { return now_; });
  }
  std::string owner(const kube::RequestInfo& info) {
    auto verdict = callers_->verify(info);
    if (auto* error = std::get_if<kube::ApiError>(&verdict)) return std::to_string(error->code);
    return "owner=" + std::get<std::string>(verdict);
  }
  // The node's cache holds kube-proxy's pod with `uid`.
  void cache_proxy_pod(const std::string& uid) {
    auto id = CachePolicy().identity(kube::classify_request(
        "GET", "/api/v1/namespaces/kube-system/pods/kube-proxy-x", "kubelet/v1.26.1"));
    auto tap = make_object_tap(*writer_, *metrics_, *id);
    tap->body(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"kube-proxy-x",)"
              R"("namespace":"kube-system","uid":")" +
              uid + R"(","resourceVersion":"5"}})");
    tap->end(true);
    writer_->flush();
  }

  std::string key_;
  std::int64_t now_ = 1795464000;
  std::unique_ptr<base::MetricsRegistry> callers_registry_;
  std::unique_ptr<Callers> callers_;
};

TEST_F(CallersTest, TheKeyIsKeptSoHashesSurviveARestart) {
  auto again = Callers::load_key(*store_);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, key_);
  EXPECT_GE(key_.size(), 32u);
}

TEST_F(CallersTest, OwnersOfWhatIsKeptOnline) {
  EXPECT_EQ(callers_->owner_of(request(std::nullopt)), "");  // the node
  EXPECT_EQ(callers_->owner_of(request(proxy_token(1827000000))), "sa:kube-system/kube-proxy");
  // Another token of the same service account (rotated by kubelet) is the same owner.
  EXPECT_EQ(callers_->owner_of(request(proxy_token(1827003600, "p-2"))),
            "sa:kube-system/kube-proxy");
  const std::string opaque = callers_->owner_of(request("0123456789abcdef"));
  EXPECT_EQ(opaque.rfind("token:", 0), 0u);
  EXPECT_EQ(opaque.size(), 6u + 32u);
  EXPECT_EQ(callers_->owner_of(request("0123456789abcdef")), opaque);
  EXPECT_NE(callers_->owner_of(request("0123456789abcdeg")), opaque);
  EXPECT_EQ(opaque.find("0123456789abcdef"), std::string::npos) << "the token itself";
}

TEST_F(CallersTest, OfflineOnlyTokensTheApiserverAcceptedReadTheirOwnersData) {
  const std::string token = proxy_token(1827000000);
  cache_proxy_pod("p-1");
  EXPECT_EQ(owner(request(std::nullopt)), "owner=");
  EXPECT_EQ(owner(request(token)), "503") << "never accepted: the node cannot verify it";
  EXPECT_EQ(owner(request("made-up")), "503");
  callers_->accepted(request(token));
  EXPECT_EQ(owner(request(token)), "owner=sa:kube-system/kube-proxy");
  // A made-up JWT that claims the same service account is still nobody's.
  EXPECT_EQ(owner(request(proxy_token(1827000000, "p-9"))), "503");
  restart();
  EXPECT_EQ(owner(request(token)), "owner=sa:kube-system/kube-proxy") << "after a restart";
}

TEST_F(CallersTest, ATokenIssuedToTheNodeIsItsServiceAccounts) {
  const std::string token = proxy_token(1827000000);
  cache_proxy_pod("p-1");
  callers_->issued(token);
  EXPECT_EQ(owner(request(token)), "owner=sa:kube-system/kube-proxy");
}

TEST_F(CallersTest, AnExpiredTokenOrOneWhosePodIsGoneIsRefused) {
  cache_proxy_pod("p-1");
  const std::string token = proxy_token(now_ + 3600);
  callers_->accepted(request(token));
  EXPECT_EQ(owner(request(token)), "owner=sa:kube-system/kube-proxy");
  now_ += 3600;
  EXPECT_EQ(owner(request(token)), "401");
  // Bound to a pod the node no longer has (another uid: the pod was replaced).
  const std::string replaced = proxy_token(1827000000, "p-old");
  callers_->accepted(request(replaced));
  EXPECT_EQ(owner(request(replaced)), "401");
}

// With the apiserver's keys kept (its issuer discovery, cached as discovery documents), a
// service-account token the node never saw accepted (kubelet rotated it offline) is verified by
// its signature; a forged one, an expired one and one whose pod is gone are not.
constexpr const char* kIssuer = "https://kubernetes.default.svc.cluster.local";

TEST_F(CallersTest, OfflineAServiceAccountTokenNeverSeenIsVerifiedByTheApiserversKeys) {
  yurthub::test_support::Key key(EVP_RSA_gen(2048));
  yurthub::test_support::Key other(EVP_RSA_gen(2048));
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) -> Status {
    if (Status s = txn.put_discovery(IssuerKeys::kConfigurationPath,
                                     R"({"issuer":")" + std::string(kIssuer) + R"("})");
        !s)
      return s;
    return txn.put_discovery(
        IssuerKeys::kKeysPath,
        R"({"keys":[)" + yurthub::test_support::rsa_jwk(key.get(), "k1") + "]}");
  }));
  IssuerKeys keys(*store_, *writer_, *callers_registry_);
  callers_.reset();
  base::MetricsRegistry registry;
  callers_ = std::make_unique<Callers>(
      *store_, *writer_, registry, key_, [this] { return now_; }, &keys);
  cache_proxy_pod("p-1");
  auto signed_token = [&](EVP_PKEY* k, std::int64_t exp, const std::string& pod_uid,
                          const std::string& audience = kIssuer) {
    return yurthub::test_support::token(
        k, "RS256", "k1",
        R"({"aud":[")" + audience + R"("],"exp":)" + std::to_string(exp) + R"(,"iss":")" + kIssuer +
            R"(","kubernetes.io":{"namespace":"kube-system","pod":{"name":"kube-proxy-x","uid":")" +
            pod_uid + R"("},"serviceaccount":{"name":"kube-proxy","uid":"s-1"}},"nbf":)" +
            std::to_string(now_ - 10) + "}");
  };
  EXPECT_EQ(owner(request(signed_token(key.get(), now_ + 3600, "p-1"))),
            "owner=sa:kube-system/kube-proxy");
  EXPECT_EQ(owner(request(signed_token(other.get(), now_ + 3600, "p-1"))), "503") << "forged";
  EXPECT_EQ(owner(request(signed_token(key.get(), now_ - 120, "p-1"))), "401") << "expired";
  EXPECT_EQ(owner(request(signed_token(key.get(), now_ + 3600, "p-old"))), "401") << "pod gone";
  EXPECT_EQ(owner(request(signed_token(key.get(), now_ + 3600, "p-1", "vault"))), "503")
      << "another audience";
  // The apiserver's audiences are learned from the tokens it issues for itself.
  callers_->issued(signed_token(key.get(), now_ + 3600, "p-1", "vault"));
  writer_->wait_tasks();
  EXPECT_EQ(owner(request(signed_token(key.get(), now_ + 7200, "p-1", "vault"))),
            "owner=sa:kube-system/kube-proxy")
      << "another token for that audience";
  EXPECT_NE(registry.render().find(
                R"(node_yurthub_offline_callers_total{verdict="service_account_signed"} 2)"),
            std::string::npos)
      << registry.render();
  callers_.reset();
}

// A cache written before owners were recorded may hold what a caller's own token obtained, under
// no owner: the first owner-aware open drops those lists (their clients list again), once.
TEST(CallersKey, ListsWrittenBeforeOwnersWereRecordedAreDroppedOnce) {
  char pattern[] = "/tmp/yurthub-callers-key-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  auto store = open_lmdb_store({dir + "/cache", 16u << 20, false});
  ASSERT_TRUE(store) << store.error().message;
  auto add_list = [&](const std::string& identity) {
    ASSERT_TRUE((*store)->write([&](WriteTxn& txn) -> Status {
      auto set = txn.allocate_set();
      if (!set) return set.error();
      ListRecord record;
      record.set_id = *set;
      record.complete = true;
      if (Status s = txn.put_object(*set, "kube-system", "cloud-keys", 3, "{}"); !s) return s;
      return txn.put_list(identity, record);
    }));
  };
  const std::string legacy =
      ListIdentity{"ops-tool", "", "v1", "secrets", "kube-system", "", ""}.key();
  add_list(legacy);
  auto key = Callers::load_key(**store);
  ASSERT_TRUE(key);
  EXPECT_FALSE((*store)->read()->list(legacy)) << "a pre-owner list is the node's no more";
  add_list(legacy);  // written since, by this hub: the node's own
  auto again = Callers::load_key(**store);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *key);
  EXPECT_TRUE((*store)->read()->list(legacy));
  store->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace yurthub::cache
