// The apiserver's service-account keys as the node keeps them; see issuer_keys.h.
#include "cache/issuer_keys.h"

#include <algorithm>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <boost/asio/post.hpp>

#include "base/json_parse.h"
#include "base/log.h"
#include "net/http_io.h"
#include "net/local_client.h"
#include "net/spawn.h"

namespace yurthub::cache {
namespace asio = boost::asio;

namespace {

constexpr std::string_view kAudiencesKey = "audiences";
constexpr std::chrono::hours kRefreshEvery{1};
constexpr std::chrono::seconds kRetryEvery{60};
constexpr std::chrono::seconds kOfflinePoll{5};
constexpr std::chrono::seconds kRequestTimeout{30};

}  // namespace

IssuerKeys::IssuerKeys(Store& store, CacheWriter& writer, base::MetricsRegistry& registry)
    : store_(store),
      writer_(writer),
      available_(registry
                     .gauge("node_yurthub_service_account_keys_available",
                            "1 when the node keeps the apiserver's service-account keys and can "
                            "verify a service-account token offline by its signature.",
                            {})
                     .with({})) {
  available_.set(keys() ? 1 : 0);
}

std::shared_ptr<const kube::ServiceAccountKeys> IssuerKeys::keys() {
  auto view = store_.read();
  auto configuration = view->discovery(kConfigurationPath);
  auto jwks = view->discovery(kKeysPath);
  view.reset();
  if (!configuration || !jwks) return nullptr;
  std::lock_guard lock(mutex_);
  if (parsed_ && *configuration == configuration_ && *jwks == jwks_) return parsed_;
  auto parsed = kube::ServiceAccountKeys::parse(*configuration, *jwks);
  if (!parsed) {
    YH_LOG(Warning) << "cache: the apiserver's service-account keys cannot be read: "
                    << parsed.error().message;
    return nullptr;
  }
  configuration_ = std::move(*configuration);
  jwks_ = std::move(*jwks);
  parsed_ = std::make_shared<const kube::ServiceAccountKeys>(std::move(*parsed));
  return parsed_;
}

std::vector<std::string> IssuerKeys::audiences() {
  std::vector<std::string> out;
  auto stored = store_.read()->secret(Secrets::Callers, kAudiencesKey);
  rapidjson::Document doc;
  if (!stored || !base::parse_json(*stored, doc) || !doc.IsArray()) return out;
  for (const auto& a : doc.GetArray()) {
    if (a.IsString()) out.emplace_back(a.GetString(), a.GetStringLength());
  }
  return out;
}

Result<kube::TokenClaims> IssuerKeys::verify(std::string_view token, std::int64_t now) {
  auto current = keys();
  if (!current) {
    return make_error(ErrorCode::NotFound, "the node keeps no service-account keys");
  }
  return current->verify(token, now, audiences());
}

void IssuerKeys::learn_audiences(std::string_view token) {
  auto claims = kube::read_jwt_claims(token);
  if (!claims || claims->audiences.empty()) return;
  std::vector<std::string> known = audiences();
  bool added = false;
  for (const std::string& a : claims->audiences) {
    if (known.size() < kMaxAudiences && std::find(known.begin(), known.end(), a) == known.end()) {
      known.push_back(a);
      added = true;
    }
  }
  if (!added) return;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const std::string& a : known) w.String(a.data(), static_cast<rapidjson::SizeType>(a.size()));
  w.EndArray();
  std::string value(buffer.GetString(), buffer.GetSize());
  writer_.run_exclusive(
      [value = std::move(value)](WriteTxn& txn) {
        return txn.put_secret(Secrets::Callers, kAudiencesKey, value);
      },
      [](const Status& s) {
        if (!s)
          YH_LOG(Warning) << "cache: cannot keep the apiserver's audiences: " << s.error().message;
      });
}

void IssuerKeys::start(hub::ReplayContext context) {
  if (running_.exchange(true)) return;
  context_ = std::move(context);
  net::spawn_detached(context_.executor, refresh_forever(), "service-account keys refresh");
}

void IssuerKeys::stop() {
  if (stopping_.exchange(true) || !running_) return;
  asio::post(context_.executor, [this] {
    if (timer_ != nullptr) timer_->cancel();
  });
}

asio::awaitable<bool> IssuerKeys::fetch(std::string_view path) {
  // Without a token: the hub lends the request its own identity, the node's. A 200 is kept by
  // the discovery tap like any other discovery document.
  // The apiserver's routes produce application/json (the configuration) and
  // application/jwk-set+json (the keys) and answer 406 to an Accept naming neither.
  const char* accept = path == kKeysPath ? "application/jwk-set+json" : "application/json";
  net::LocalRequest request{
      "GET", std::string(path), {{"User-Agent", "yurthub"}, {"Accept", accept}}, ""};
  auto response =
      co_await net::local_request(context_.executor, context_.proxy_host, context_.proxy_port,
                                  std::move(request), kRequestTimeout);
  if (!response) co_return false;
  if (response->status != 200 && response->status != 403) {
    YH_LOG(Warning) << "cache: reading the apiserver's " << path << " answered "
                    << response->status;
  }
  if (response->status == 403 && !hinted_) {
    hinted_ = true;
    YH_LOG(Warning) << "cache: the apiserver refuses the node its service-account keys (" << path
                    << ": 403); offline, service-account tokens are then recognised only if "
                       "the apiserver accepted them on this node. Bind ClusterRole "
                       "system:service-account-issuer-discovery to group system:nodes "
                       "(docs/operations.md) to verify them by signature";
  }
  co_return response->status == 200;
}

asio::awaitable<void> IssuerKeys::refresh_forever() {
  net::Timer timer(context_.executor);
  timer_ = &timer;
  struct Forget {
    net::Timer*& timer;
    ~Forget() { timer = nullptr; }
  } forget{timer_};
  while (!stopping_) {
    std::chrono::milliseconds wait = kOfflinePoll;
    if (context_.online()) {
      const bool configuration = co_await fetch(kConfigurationPath);
      const bool jwks = configuration && co_await fetch(kKeysPath);
      wait = jwks ? std::chrono::milliseconds(kRefreshEvery) : kRetryEvery;
      if (jwks) {  // once the discovery tap's write is committed (the writer's 50 ms batches)
        timer.expires_after(std::chrono::seconds(2));
        co_await timer.async_wait(net::kNoThrow);
        const bool kept = keys() != nullptr;
        if (kept && available_.value() == 0) {
          YH_LOG(Info) << "cache: the apiserver's service-account keys are kept: offline, "
                          "service-account tokens are verified by their signature";
        }
        available_.set(kept ? 1 : 0);
      }
    }
    timer.expires_after(wait);
    co_await timer.async_wait(net::kNoThrow);
  }
}

}  // namespace yurthub::cache
