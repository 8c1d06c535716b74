// pool_cache_bench: the memory of the shared watch cache (pool::WatchCache, issue 32) holding
// 10,000 EndpointSlices, against the size of their JSON (goal: RSS ≤ 1.5× the JSON):
//   1. after the reflector's first list (listed() with a list body of the slices);
//   2. after one MODIFIED event per slice (event()), when the cache's event window also holds
//      each slice's previous state, as it does for up to its window (10,000 events, 180 s).
// Slices are shaped like the fake apiserver's churn slices (test/fake_apiserver/churn.cc: 10
// endpoints on edge nodes, one port) plus the metadata the apiserver adds. Memory is the process's
// resident set (/proc/self/statm) after malloc_trim, so freed parse buffers are not counted; the
// list body itself is freed before the measure. Each step checks the cache holds every slice at the
// right resourceVersion. Run by test/bench/pool_sharing.sh; `--quick` (ctest) checks 100 slices.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "pool/watch_cache.h"
#include "test/bench/bench_support.h"

namespace yurthub::bench {
namespace {

constexpr std::uint64_t kListVersion = 500000;

// Resident bytes of this process, after giving freed heap back to the system.
std::size_t resident_bytes() {
  ::malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// EndpointSlice i at resourceVersion rv, written as the apiserver writes it: as a list item
// (no kind, apiVersion) or as a watch event's object (with them first).
std::string slice(int i, std::uint64_t rv, int seq, bool with_kind) {
  const std::string name = "svc-" + std::to_string(i) + "-" + std::to_string(10000 + i);
  char uid[48];
  std::snprintf(uid, sizeof uid, "5c1e0f3a-2b7d-4e59-9a10-%012d", i);
  std::string s = "{";
  if (with_kind) s += R"("kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1",)";
  s +=
      R"("metadata":{"name":")" + name + R"(","generateName":"svc-)" + std::to_string(i) +
      R"(-","namespace":"churn","uid":")" + uid + R"(","resourceVersion":")" + std::to_string(rv) +
      R"(","generation":)" + std::to_string(seq + 1) +
      R"(,"creationTimestamp":"2026-11-27T07:00:00Z","labels":{"endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io","kubernetes.io/service-name":"svc-)" +
      std::to_string(i) +
      R"("},"ownerReferences":[{"apiVersion":"v1","kind":"Service","name":"svc-)" +
      std::to_string(i) +
      R"(","uid":"7d2a9c4e-1f3b-4a6d-8e5f-000000000000","controller":true,"blockOwnerDeletion":true}]},"addressType":"IPv4","endpoints":[)";
  for (int j = 0; j < 10; ++j) {
    if (j) s += ',';
    s +=
        R"({"addresses":["10.)" + std::to_string(i % 250) + "." + std::to_string(i / 250) + "." +
        std::to_string(j + 1) +
        R"("],"conditions":{"ready":true,"serving":true,"terminating":false},"nodeName":"edge-node-)" +
        std::to_string(1 + (seq + j) % 20) +
        R"(","targetRef":{"kind":"Pod","namespace":"churn","name":"svc-)" + std::to_string(i) +
        "-pod-" + std::to_string(j) + R"("}})";
  }
  s += R"(],"ports":[{"name":"http","protocol":"TCP","port":8080}]})";
  return s;
}

// Checks the cache holds `count` slices, the last one at `rv`.
void check(const pool::WatchCache& cache, int count, std::uint64_t rv, const char* step) {
  auto snapshot = cache.snapshot();
  if (!cache.synced() || static_cast<int>(snapshot->objects.size()) != count)
    fail(std::string(step) + ": the cache holds " + std::to_string(snapshot->objects.size()) +
         " slices, want " + std::to_string(count));
  if (cache.resource_version() != rv)
    fail(std::string(step) + ": the cache is at resourceVersion " +
         std::to_string(cache.resource_version()) + ", want " + std::to_string(rv));
}

std::string mib(std::size_t bytes) { return fixed(static_cast<double>(bytes) / 1048576.0, 1); }

// `quick`: 100 slices, a few pages each, so the ratios mean nothing; only the checks count.
void bench(int count, bool quick) {
  const std::size_t before = resident_bytes();
  std::size_t json_bytes = 0;  // the items' JSON, as the cache keeps them (list items)
  std::string body = R"({"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1",)"
                     R"("metadata":{"resourceVersion":")" +
                     std::to_string(kListVersion) + R"("},"items":[)";
  for (int i = 0; i < count; ++i) {
    const std::string item = slice(i, kListVersion - count + i, 0, false);
    json_bytes += item.size();
    if (i) body += ',';
    body += item;
  }
  body += "]}";

  pool::WatchCache::Options options;
  options.name = "discovery.k8s.io/v1/endpointslices";
  auto cache = std::make_unique<pool::WatchCache>(options);
  auto keep = cache->watch(std::nullopt, [] {});  // one watcher, as when clients are served
  const auto start = std::chrono::steady_clock::now();
  std::string rv;
  if (auto listed = cache->listed(body, &rv); !listed.ok()) fail("listed() refused the list");
  const double list_seconds = seconds_since(start);
  body.clear();
  body.shrink_to_fit();
  check(*cache, count, kListVersion, "after the list");
  const std::size_t after_list = resident_bytes() - before;

  std::size_t event_bytes = 0;
  for (int i = 0; i < count; ++i) {
    const std::string event =
        R"({"type":"MODIFIED","object":)" + slice(i, kListVersion + 1 + i, 1, true) + "}";
    event_bytes += event.size();
    std::string reason;
    if (cache->event(event, &rv, &reason) != net::EventVerdict::Ok)
      fail("event() refused event " + std::to_string(i) + ": " + reason);
  }
  cache->events_done();
  check(*cache, count, kListVersion + count, "after one MODIFIED per slice");
  keep.subscription->take();  // its inbox is the clients', not the cache's
  const std::size_t after_events = resident_bytes() - before;

  const double ratio_list = static_cast<double>(after_list) / static_cast<double>(json_bytes);
  const double ratio_events = static_cast<double>(after_events) / static_cast<double>(json_bytes);
  const std::string goal = "≤ 1.5× the JSON (" + mib(json_bytes) + " MiB)";
  row("shared cache RSS, " + std::to_string(count) + " EndpointSlices listed (listed() in " +
          fixed(list_seconds * 1000, 0) + " ms)",
      mib(after_list) + " MiB = " + fixed(ratio_list, 2) + "× their JSON", goal,
      quick               ? "-"
      : ratio_list <= 1.5 ? "met"
                          : "MISSED");
  row("the same after one MODIFIED per slice (window holds the previous states; " +
          mib(event_bytes) + " MiB of events)",
      mib(after_events) + " MiB = " + fixed(ratio_events, 2) + "× their JSON", goal,
      quick                 ? "-"
      : ratio_events <= 1.5 ? "met"
                            : "MISSED");
}

}  // namespace
}  // namespace yurthub::bench

int main(int argc, char** argv) {
  using namespace yurthub::bench;
  const bool quick = quick_mode(argc, argv);
  std::printf("\n| measure | value | budget | verdict |\n|---|---|---|---|\n");
  bench(quick ? 100 : 10000, quick);
  return 0;
}
