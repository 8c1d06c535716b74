// The churn control endpoint; see churn.h.
#include "test/fake_apiserver/churn.h"

#include <charconv>

#include <rapidjson/document.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"
#include "kube/request_info.h"
#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace asio = boost::asio;

namespace {

bool to_int(std::string_view text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && out > 0;
}

rapidjson::Value string_value(const std::string& text, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(text.c_str(), static_cast<rapidjson::SizeType>(text.size()), a);
}

// ConfigMap c-K at its seq-th write: `data.seq`.
void fill_configmap(rapidjson::Document& doc, int seq) {
  auto& a = doc.GetAllocator();
  rapidjson::Value data(rapidjson::kObjectType);
  data.AddMember("seq", string_value(std::to_string(seq), a), a);
  doc.AddMember("data", data, a);
}

// EndpointSlice svc-K of Service svc-K at its seq-th write: `endpoints` endpoints (10.K.x.y),
// spread over nodes edge-node-1..edge-node-20 and moving by one node per write, as pods come and
// go.
void fill_endpoint_slice(rapidjson::Document& doc, int object, int seq, int endpoints) {
  auto& a = doc.GetAllocator();
  rapidjson::Value labels(rapidjson::kObjectType);
  labels.AddMember("kubernetes.io/service-name", string_value("svc-" + std::to_string(object), a),
                   a);
  labels.AddMember("endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io", a);
  doc["metadata"].AddMember("labels", labels, a);
  doc.AddMember("addressType", "IPv4", a);
  rapidjson::Value list(rapidjson::kArrayType);
  for (int j = 0; j < endpoints; ++j) {
    const std::string node = "edge-node-" + std::to_string(1 + (seq + j) % 20);
    const std::string ip = "10." + std::to_string(object % 250) + "." + std::to_string(j / 250) +
                           "." + std::to_string(j % 250 + 1);
    rapidjson::Value ep(rapidjson::kObjectType), addresses(rapidjson::kArrayType),
        conditions(rapidjson::kObjectType), target(rapidjson::kObjectType);
    addresses.PushBack(string_value(ip, a), a);
    conditions.AddMember("ready", true, a)
        .AddMember("serving", true, a)
        .AddMember("terminating", false, a);
    target.AddMember("kind", "Pod", a)
        .AddMember("namespace", string_value(doc["metadata"]["namespace"].GetString(), a), a);
    target.AddMember(
        "name", string_value("svc-" + std::to_string(object) + "-pod-" + std::to_string(j), a), a);
    ep.AddMember("addresses", addresses, a).AddMember("conditions", conditions, a);
    ep.AddMember("nodeName", string_value(node, a), a).AddMember("targetRef", target, a);
    list.PushBack(ep, a);
  }
  doc.AddMember("endpoints", list, a);
  rapidjson::Value ports(rapidjson::kArrayType), port(rapidjson::kObjectType);
  port.AddMember("name", "http", a).AddMember("protocol", "TCP", a).AddMember("port", 8080, a);
  ports.PushBack(port, a);
  doc.AddMember("ports", ports, a);
}

rapidjson::Document metadata_only(const std::string& ns, const std::string& name) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  rapidjson::Value metadata(rapidjson::kObjectType);
  metadata.AddMember("name", string_value(name, a), a);
  metadata.AddMember("namespace", string_value(ns, a), a);
  doc.AddMember("metadata", metadata, a);
  return doc;
}

// Services svc-0..svc-(N-1), keyed by host (openyurt.io/topologyKeys), for the slices' topology.
void put_services(Store& store, const ChurnRequest& request) {
  const ResourceInfo* services = find_resource("", "v1", "services");
  for (int k = 0; k < request.objects; ++k) {
    const std::string name = "svc-" + std::to_string(k);
    if (store.get(services->key(), request.namespace_name, name)) continue;
    rapidjson::Document doc = metadata_only(request.namespace_name, name);
    auto& a = doc.GetAllocator();
    rapidjson::Value annotations(rapidjson::kObjectType);
    annotations.AddMember("openyurt.io/topologyKeys", "kubernetes.io/hostname", a);
    doc["metadata"].AddMember("annotations", annotations, a);
    rapidjson::Value spec(rapidjson::kObjectType);
    spec.AddMember("type", "ClusterIP", a).AddMember("clusterIP", "10.96.0.50", a);
    doc.AddMember("spec", spec, a);
    store.put(services->key(), request.namespace_name, name, doc);
  }
}

asio::awaitable<void> churn(Store& store, ChurnRequest request) {
  const bool slices = request.resource == "endpointslices";
  const ResourceInfo* resource = slices ? find_resource("discovery.k8s.io", "v1", "endpointslices")
                                        : find_resource("", "v1", "configmaps");
  if (slices) put_services(store, request);
  for (int seq = 0; seq < request.events; ++seq) {
    const int object = seq % request.objects;
    const std::string name = (slices ? "svc-" : "c-") + std::to_string(object);
    rapidjson::Document doc = metadata_only(request.namespace_name, name);
    if (slices)
      fill_endpoint_slice(doc, object, seq, request.endpoints);
    else
      fill_configmap(doc, seq);
    const StoredObject stored = store.put(resource->key(), request.namespace_name, name, doc);
    YH_LOG(Info) << "churn " << request.namespace_name << "/" << name << " seq=" << seq
                 << " rv=" << stored.rv;
    // Let the watchers send what is queued before writing more.
    if (seq % 20 == 19)
      co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
  }
  YH_LOG(Info) << "churn done events=" << request.events;
}

}  // namespace

std::optional<ChurnRequest> parse_churn_query(std::string_view query) {
  ChurnRequest request;
  bool ok = true;
  kube::for_each_query_param(query, [&](std::string_view key, std::string_view value) {
    if (key == "objects")
      ok = ok && to_int(value, request.objects);
    else if (key == "events")
      ok = ok && to_int(value, request.events);
    else if (key == "endpoints")
      ok = ok && to_int(value, request.endpoints);
    else if (key == "resource")
      request.resource = value;
    else if (key == "namespace")
      request.namespace_name = value;
  });
  if (request.resource != "configmaps" && request.resource != "endpointslices") ok = false;
  if (!ok || request.namespace_name.empty()) return std::nullopt;
  return request;
}

void start_churn(asio::any_io_executor executor, Store& store, ChurnRequest request) {
  asio::co_spawn(executor, churn(store, std::move(request)), asio::detached);
}

}  // namespace yurthub::fake
