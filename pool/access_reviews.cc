// Access reviews for bearer-token callers of the shared cache; see access_reviews.h.
#include "pool/access_reviews.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <boost/asio/this_coro.hpp>

#include "base/clock.h"
#include "base/json_parse.h"
#include "net/local_client.h"

namespace yurthub::pool {
namespace asio = boost::asio;

std::string access_review_body(const kube::RequestInfo& info) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("SelfSubjectAccessReview");
  w.Key("apiVersion");
  w.String("authorization.k8s.io/v1");
  w.Key("spec");
  w.StartObject();
  w.Key("resourceAttributes");
  w.StartObject();
  const auto field = [&](const char* key, std::string_view value) {
    if (value.empty()) return;
    w.Key(key);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  field("namespace", info.namespace_name);
  field("verb", kube::verb_name(info.verb));
  field("group", info.api_group);
  field("version", info.api_version);
  field("resource", info.resource);
  field("name", info.name);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

bool review_allows(std::string_view body) {
  rapidjson::Document doc;
  if (!base::parse_json(body, doc) || !doc.IsObject()) return false;
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) return false;
  auto allowed = status->value.FindMember("allowed");
  return allowed != status->value.MemberEnd() && allowed->value.IsBool() &&
         allowed->value.GetBool();
}

AccessReviews::AccessReviews(base::MetricsRegistry& metrics)
    : reviews_(metrics.counter("node_yurthub_pool_access_reviews_total",
                               "SelfSubjectAccessReviews the hub made for bearer-token callers of "
                               "the shared watch cache, by result (allowed, denied, failed).",
                               {"result"})) {}

void AccessReviews::set_options(AccessReviewOptions options) { options_ = std::move(options); }

std::string AccessReviews::key_of(const kube::RequestInfo& info) const {
  std::string key = *info.bearer_token;
  for (std::string_view part :
       {kube::verb_name(info.verb), std::string_view(info.api_group),
        std::string_view(info.resource), std::string_view(info.namespace_name),
        std::string_view(info.name)}) {
    key += '\n';
    key.append(part);
  }
  return key;
}

asio::awaitable<bool> AccessReviews::allowed(const kube::RequestInfo& info) {
  const std::string key = key_of(info);
  const auto now = base::Clock::now();
  {
    std::lock_guard lock(mutex_);
    auto it = verdicts_.find(key);
    if (it != verdicts_.end() && it->second.until > now) co_return it->second.allowed;
  }
  net::LocalRequest request;
  request.method = "POST";
  request.target = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  request.headers = {{"Authorization", "Bearer " + *info.bearer_token},
                     {"User-Agent", options_.user_agent},
                     {"Content-Type", "application/json"},
                     {"Accept", "application/json"}};
  request.body = access_review_body(info);
  auto executor = co_await asio::this_coro::executor;
  auto answer = co_await net::local_request(executor, options_.proxy_host, options_.proxy_port,
                                            std::move(request), options_.timeout);
  if (!answer || answer->status != 201) {
    // Not asked (offline, or the apiserver refused the review): not cleared, not remembered.
    reviews_.with({"failed"}).inc();
    co_return false;
  }
  const bool allowed = review_allows(answer->body);
  reviews_.with({allowed ? "allowed" : "denied"}).inc();
  std::lock_guard lock(mutex_);
  const auto after = base::Clock::now();
  if (verdicts_.size() >= options_.max_entries) {
    std::erase_if(verdicts_, [&](const auto& kv) { return kv.second.until <= after; });
    if (verdicts_.size() >= options_.max_entries) verdicts_.clear();
  }
  verdicts_[key] = {allowed, after + (allowed ? options_.allowed_for : options_.denied_for)};
  co_return allowed;
}

}  // namespace yurthub::pool
