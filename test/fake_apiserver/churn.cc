// The churn control endpoint; see churn.h.
#include "test/fake_apiserver/churn.h"

#include <charconv>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <rapidjson/document.h>

#include "hub/log.h"
#include "hub/request_info.h"
#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace net = boost::asio;

namespace {

bool to_int(const std::string& text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && out > 0;
}

net::awaitable<void> churn(Store& store, ChurnRequest request) {
  const ResourceInfo* configmaps = find_resource("", "v1", "configmaps");
  for (int seq = 0; seq < request.events; ++seq) {
    const std::string name = "c-" + std::to_string(seq % request.objects);
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    rapidjson::Value metadata(rapidjson::kObjectType);
    metadata.AddMember("name", rapidjson::Value(name.c_str(), a), a);
    metadata.AddMember("namespace", rapidjson::Value(request.namespace_name.c_str(), a), a);
    rapidjson::Value data(rapidjson::kObjectType);
    data.AddMember("seq", rapidjson::Value(std::to_string(seq).c_str(), a), a);
    doc.AddMember("metadata", metadata, a);
    doc.AddMember("data", data, a);
    const StoredObject stored = store.put(configmaps->key(), request.namespace_name, name, doc);
    YH_LOG(Info) << "churn " << request.namespace_name << "/" << name << " seq=" << seq
                 << " rv=" << stored.rv;
    // Let the watchers send what is queued before writing more.
    if (seq % 20 == 19) co_await net::post(co_await net::this_coro::executor, net::use_awaitable);
  }
  YH_LOG(Info) << "churn done events=" << request.events;
}

}  // namespace

std::optional<ChurnRequest> parse_churn_query(std::string_view query) {
  ChurnRequest request;
  bool ok = true;
  hub::for_each_query_param(query, [&](const std::string& key, const std::string& value) {
    if (key == "objects") ok = ok && to_int(value, request.objects);
    else if (key == "events") ok = ok && to_int(value, request.events);
    else if (key == "namespace") request.namespace_name = value;
  });
  if (!ok || request.namespace_name.empty()) return std::nullopt;
  return request;
}

void start_churn(net::any_io_executor executor, Store& store, ChurnRequest request) {
  net::co_spawn(executor, churn(store, std::move(request)), net::detached);
}

}  // namespace yurthub::fake
