// filter_bench: the servicetopology filter as the hub runs it, a FilterChain over a response body
// fed in network-sized pieces, on one thread:
//   1. a list of EndpointSlices with 50,000 endpoints in all (500 Services x 100 endpoints, on 100
//      nodes): time from the first byte fed to the filtered list written;
//   2. a watch of EndpointSlices with a realistic event mix (90% MODIFIED, 4% ADDED, 4% DELETED,
//      2% BOOKMARK; 1 to 30 endpoints per slice): events filtered per CPU-second of the thread;
//   3. kubelet's pod list through serviceenvupdater: 10,000 pods of ~2 KB (shaped like the fake
//      apiserver's generated pods, most of each a big annotation), 1 in 100 setting
//      KUBERNETES_SERVICE_HOST/PORT: time from the first byte fed to the filtered list written.
// Services are keyed by pool (half), by host (a quarter) or not at all; this node is edge-node-1,
// its pool edge-node-1..10. The first two checks count the endpoints the client receives against
// what the topology allows. Run by test/bench/run.sh; `--quick` (ctest) checks with tiny sizes.
#include <cstdio>
#include <random>
#include <string>

#include <rapidjson/document.h>

#include "filters/filter_chain.h"
#include "filters/service_env_updater.h"
#include "filters/service_topology.h"
#include "test/base/watch_events.h"
#include "test/bench/bench_support.h"

namespace yurthub::bench {
namespace {

using filters::ClusterView;
using filters::FilterChain;

constexpr int kNodes = 100;
constexpr int kPoolNodes = 10;  // edge-node-1 .. edge-node-10 form this node's pool

double mib(std::size_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

enum class Key { Pool, Host, None };
Key key_of(int service) {
  return service % 4 < 2 ? Key::Pool : service % 4 == 2 ? Key::Host : Key::None;
}

bool kept(Key key, int node) {
  return key == Key::None || (key == Key::Host ? node == 1 : node <= kPoolNodes);
}

std::string service_json(int i) {
  const char* key =
      key_of(i) == Key::Pool   ? R"({"openyurt.io/topologyKeys":"openyurt.io/nodepool"})"
      : key_of(i) == Key::Host ? R"({"openyurt.io/topologyKeys":"kubernetes.io/hostname"})"
                               : "{}";
  return R"({"metadata":{"name":"svc-)" + std::to_string(i) +
         R"(","namespace":"bench","resourceVersion":"10","annotations":)" + key +
         R"(},"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],)"
         R"("selector":{"app":"web"},"clusterIP":"10.96.0.10","type":"ClusterIP"}})";
}

std::shared_ptr<const ClusterView> make_view(int services) {
  auto view = std::make_shared<ClusterView>();
  view->node_name = "edge-node-1";
  view->pool_name = "pool-a";
  view->pool_known = true;
  for (int n = 1; n <= kPoolNodes; ++n) view->pool_nodes.insert("edge-node-" + std::to_string(n));
  auto map = std::make_shared<net::ObjectMap>();
  for (int i = 0; i < services; ++i) {
    auto doc = std::make_shared<rapidjson::Document>();
    doc->Parse(service_json(i).c_str());
    (*map)["bench/svc-" + std::to_string(i)] = std::move(doc);
  }
  view->services = std::move(map);
  view->hub_host = "169.254.2.1";
  view->node_synced = view->pools_synced = view->services_synced = true;
  return view;
}

// One EndpointSlice of `service` with endpoints on `nodes`; `head` is spliced in first
// (kind/apiVersion, which watch events carry and list items do not).
std::string slice_json(int service, int slice, int rv, const std::vector<int>& nodes,
                       const std::string& head = "") {
  std::string out = "{" + head + R"("metadata":{"name":"svc-)" + std::to_string(service) + "-" +
                    std::to_string(slice) + R"(","generateName":"svc-)" + std::to_string(service) +
                    R"(-","namespace":"bench","uid":"3f1c2a5e-0d4b-4c8e-9a7f-)" +
                    std::to_string(100000000000 + slice) + R"(","resourceVersion":")" +
                    std::to_string(rv) +
                    R"(","generation":3,"creationTimestamp":"2026-11-21T13:40:53Z","labels":{)"
                    R"("endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io",)"
                    R"("kubernetes.io/service-name":"svc-)" +
                    std::to_string(service) + R"("}},"addressType":"IPv4","endpoints":[)";
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    const int n = nodes[j];
    out +=
        (j ? "," : "") + std::string(R"({"addresses":["10.)") + std::to_string(n) + "." +
        std::to_string(j / 250) + "." + std::to_string(j % 250 + 1) +
        R"("],"conditions":{"ready":true,"serving":true,"terminating":false},"nodeName":"edge-node-)" +
        std::to_string(n) + R"(","targetRef":{"kind":"Pod","namespace":"bench","name":"web-)" +
        std::to_string(service) + "-" + std::to_string(j) +
        R"(","uid":"8d2b6c1e-2f4a-4b7c-9e3d-5a6b7c8d9e0f"},"zone":"zone-a"})";
  }
  return out + R"(],"ports":[{"name":"http","protocol":"TCP","port":8080}]})";
}

// Feeds `body` in 16 KiB pieces (what one read of the upstream socket gives) and finishes. What
// the chain writes after each piece is sent on and forgotten, as the hub does; it is kept in
// `kept` when given (the untimed checking run).
void filter(FilterChain& chain, const std::string& body, std::string* kept = nullptr) {
  std::string out;
  for (std::size_t at = 0; at < body.size(); at += 16384) {
    if (chain.feed(std::string_view(body).substr(at, 16384), &out) == hub::FilterStatus::Cut)
      fail("feed failed");
    if (kept) kept->append(out);
    out.clear();
  }
  if (chain.finish(&out) == hub::FilterStatus::Cut) fail("finish failed");
  if (kept) kept->append(out);
}

// The same for a watch: framed into events (as the hub's BodyTransform does, once per event,
// counted in the rate) and fed to the chain one event at a time.
void filter_watch(FilterChain& chain, const std::string& stream, std::string* kept = nullptr) {
  std::string out;
  const bool framed = test_support::for_each_watch_event(
      stream, 16384, [&](std::string_view raw) { (void)chain.event(raw, &out); },
      [&] {
        if (kept) kept->append(out);
        out.clear();
      });
  if (!framed) fail("the watch stream cannot be framed");
}

// kube-proxy's chain for EndpointSlices: servicetopology alone, over `view`. Each chain() is a
// new response's chain, as the hub makes one per request.
class TopologyChains {
 public:
  explicit TopologyChains(std::shared_ptr<const ClusterView> view)
      : view_(std::move(view)),
        metrics_(registry_),
        topology_(filters::make_service_topology_filter()) {}
  std::unique_ptr<FilterChain> chain(FilterChain::Shape shape) {
    return std::make_unique<FilterChain>(
        shape, std::vector<const filters::ObjectFilter*>{topology_.get()}, [this] { return view_; },
        metrics_, views_.get("kube-proxy endpointslices"));
  }

 private:
  std::shared_ptr<const ClusterView> view_;
  filters::ClientViews views_;
  base::MetricsRegistry registry_;
  filters::FilterMetrics metrics_;
  std::unique_ptr<filters::ObjectFilter> topology_;
};

std::size_t count_endpoints(const rapidjson::Value& slice) {
  return slice.HasMember("endpoints") ? slice["endpoints"].Size() : 0;
}

void bench_list(int services, int per_slice, int runs) {
  TopologyChains chains(make_view(services));
  std::string body =
      R"({"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1","metadata":{"resourceVersion":"5000"},"items":[)";
  std::size_t expected = 0;
  for (int s = 0; s < services; ++s) {
    std::vector<int> nodes;
    for (int j = 0; j < per_slice; ++j) {
      nodes.push_back(1 + (s * 7 + j) % kNodes);
      expected += kept(key_of(s), nodes.back());
    }
    body += (s ? "," : "") + slice_json(s, s, 4000 + s, nodes);
  }
  body += "]}";

  {  // the checking run, untimed
    std::string out;
    filter(*chains.chain(FilterChain::Shape::List), body, &out);
    rapidjson::Document doc;
    doc.Parse(out.c_str());
    if (doc.HasParseError() || !doc.HasMember("items")) fail("filtered list is not a list");
    std::size_t got = 0;
    for (const auto& item : doc["items"].GetArray()) got += count_endpoints(item);
    if (got != expected)
      fail("list kept " + std::to_string(got) + " endpoints, expected " + std::to_string(expected));
  }
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    filter(*chains.chain(FilterChain::Shape::List), body);
    times.push_back(seconds_since(start));
  }
  const double ms = median(times) * 1000;
  row("servicetopology, list of " + std::to_string(services * per_slice) + " endpoints (" +
          fixed(mib(body.size()), 1) + " MiB, " + std::to_string(expected) + " kept)",
      fixed(ms, 1) + " ms (median of " + std::to_string(runs) + "), " +
          fixed(mib(body.size()) / median(times), 0) + " MiB/s",
      "≤ 50 ms", ms <= 50 ? "met" : "MISSED");
}

void bench_watch(int services, int events, int runs) {
  TopologyChains chains(make_view(services));
  std::mt19937 rng(42);
  const std::string head = R"("kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1",)";
  std::string stream;
  std::size_t expected = 0;  // endpoints in the ADDED and MODIFIED events the client receives
  int rv = 10000, next_slice = services;
  for (int e = 0; e < events; ++e) {
    const int pick = static_cast<int>(rng() % 100);
    ++rv;
    if (pick < 2) {
      stream += R"({"type":"BOOKMARK","object":{)" + head + R"("metadata":{"resourceVersion":")" +
                std::to_string(rv) + "\"}}}\n";
      continue;
    }
    const int service = static_cast<int>(rng() % services);
    std::vector<int> nodes(1 + rng() % 30);
    for (int& n : nodes) n = 1 + static_cast<int>(rng() % kNodes);
    const char* type = pick < 6 ? "ADDED" : pick < 10 ? "DELETED" : "MODIFIED";
    const int slice = pick < 6 ? next_slice++ : service;
    if (pick >= 10 || pick < 6)
      for (int n : nodes) expected += kept(key_of(service), n);
    stream += std::string(R"({"type":")") + type + R"(","object":)" +
              slice_json(service, slice, rv, nodes, head) + "}\n";
  }

  {  // the checking run, untimed
    std::string out;
    filter_watch(*chains.chain(FilterChain::Shape::Watch), stream, &out);
    std::size_t got = 0, lines = 0;
    for (std::size_t at = 0; at < out.size();) {
      const std::size_t end = out.find('\n', at);
      rapidjson::Document doc;
      doc.Parse(out.data() + at, end - at);
      if (doc.HasParseError()) fail("filtered event is not JSON");
      const std::string type = doc["type"].GetString();
      if (type == "ADDED" || type == "MODIFIED") got += count_endpoints(doc["object"]);
      ++lines;
      at = end + 1;
    }
    if (lines != static_cast<std::size_t>(events) || got != expected)
      fail("watch sent " + std::to_string(lines) + " events with " + std::to_string(got) +
           " endpoints, expected " + std::to_string(events) + " with " + std::to_string(expected));
  }
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    const double cpu = thread_cpu_seconds();
    filter_watch(*chains.chain(FilterChain::Shape::Watch), stream);
    rates.push_back(events / std::max(thread_cpu_seconds() - cpu, 1e-9));
  }
  const double rate = median(rates);
  row("servicetopology, watch of " + std::to_string(events) + " EndpointSlice events (" +
          fixed(mib(stream.size()), 1) + " MiB)",
      fixed(rate / 1000, 0) + "k events per CPU-second (median of " + std::to_string(runs) + ")",
      "≥ 50k events/s per core", rate >= 50000 ? "met" : "MISSED");
}

// One pod of kubelet's list, like test/fake_apiserver/seed.cc's generate_pods: metadata padded to
// ~2 KB by an annotation (a last-applied-configuration, the usual big one); with `env`, its
// container sets KUBERNETES_SERVICE_HOST/PORT to `host`/`port`.
std::string pod_json(int i, bool env, const std::string& host, const std::string& port) {
  static const std::string kPadding = [] {
    std::string text;
    while (text.size() < 1500)
      text += R"({\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"labels\":{\"app\":)"
              R"(\"bulk\"}},\"spec\":{\"containers\":[{\"image\":\"registry.k8s.io/pause:3.9\",)"
              R"(\"imagePullPolicy\":\"IfNotPresent\",\"name\":\"app\"}]}})";
    return text;
  }();
  char name[32];
  std::snprintf(name, sizeof name, "bulk-pod-%06d", i);
  return std::string(R"({"metadata":{"name":")") + name +
         R"(","namespace":"bulk","uid":"6b1f0c2e-4d3a-4f5b-8c7d-)" +
         std::to_string(100000000000 + i) + R"(","resourceVersion":")" + std::to_string(5000 + i) +
         R"(","creationTimestamp":"2026-11-21T13:40:53Z","labels":{"app":"bulk"},"annotations":{)"
         R"("kubectl.kubernetes.io/last-applied-configuration":")" +
         kPadding +
         R"("}},"spec":{"nodeName":"edge-node-1","containers":[{"name":"app",)"
         R"("image":"registry.k8s.io/pause:3.9",)" +
         (env ? R"("env":[{"name":"KUBERNETES_SERVICE_HOST","value":")" + host +
                    R"("},{"name":"KUBERNETES_SERVICE_PORT","value":")" + port + R"("}],)"
              : std::string()) +
         R"("imagePullPolicy":"IfNotPresent"}]},"status":{"phase":"Running"}})";
}

// kubelet's list of its pods, filtered by serviceenvupdater alone (its chain for pods). The
// check: the output is the list with only the env pods' two values changed, byte for byte.
void bench_pods(int pods, int runs) {
  auto view = make_view(0);
  base::MetricsRegistry registry;
  filters::FilterMetrics metrics(registry);
  const auto env_updater = filters::make_service_env_updater_filter();
  auto chain = [&] {
    return std::make_unique<FilterChain>(
        FilterChain::Shape::List, std::vector<const filters::ObjectFilter*>{env_updater.get()},
        [&] { return view; }, metrics);
  };
  const std::string head =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"20000"},"items":[)";
  std::string body = head, expected = head;
  for (int i = 1; i <= pods; ++i) {
    const bool env = i % 100 == 0;
    body += (i > 1 ? "," : "") + pod_json(i, env, "10.96.0.1", "443");
    expected += (i > 1 ? "," : "") + pod_json(i, env, view->hub_host, "10268");
  }
  body += "]}";
  expected += "]}";

  {  // the checking run, untimed
    std::string out;
    filter(*chain(), body, &out);
    if (out != expected) fail("the filtered pod list is not the list with the hub's address");
  }
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    filter(*chain(), body);
    times.push_back(seconds_since(start));
  }
  const double ms = median(times) * 1000;
  row("serviceenvupdater, kubelet's list of " + std::to_string(pods) + " pods (" +
          fixed(mib(body.size()), 1) + " MiB, " + std::to_string(pods / 100) + " rewritten)",
      fixed(ms, 1) + " ms (median of " + std::to_string(runs) + "), " +
          fixed(mib(body.size()) / median(times), 0) + " MiB/s",
      "—", "info");
}

}  // namespace
}  // namespace yurthub::bench

int main(int argc, char** argv) {
  using namespace yurthub::bench;
  const bool quick = quick_mode(argc, argv);
  // "list", "watch" or "pods" runs that one alone, e.g. under perf.
  const std::string only = flag(argc, argv, "only", "");
  if (only.empty() || only == "list") bench_list(quick ? 8 : 500, quick ? 10 : 100, quick ? 1 : 9);
  if (only.empty() || only == "watch")
    bench_watch(quick ? 8 : 500, quick ? 200 : 20000, quick ? 1 : 5);
  if (only.empty() || only == "pods") bench_pods(quick ? 200 : 10000, quick ? 1 : 9);
  return 0;
}
