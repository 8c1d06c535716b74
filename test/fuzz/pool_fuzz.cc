// Fuzz target for the pool's parsers of network and client input: what the shared watch cache
// reads from upstream (a list body, then watch events, fed to pool::WatchCache), a client's
// continue token (decode_pool_continue), the leader-hub ConfigMap (parse_pool_resources,
// parse_leader_hub_config) and a SelfSubjectAccessReview answer (review_allows). The first byte
// picks the parser; for the cache, the rest is NUL-separated: a list, then events. Oracles: the
// cache's snapshot is sorted by key without duplicates, its resourceVersion never goes back, and
// a watch's backlog is in order; a decoded continue token encodes to one that decodes the same.
#include <rapidjson/document.h>

#include <string>

#include "base/json_parse.h"
#include "pool/access_reviews.h"
#include "pool/leader_hub_config.h"
#include "pool/shared_serving.h"
#include "pool/watch_cache.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

void feed_cache(std::string_view in) {
  pool::WatchCache::Options o;
  o.window_events = 8;
  o.max_pending = 16;
  pool::WatchCache cache(o);
  const auto parts = fuzz::split_parts(in, 32);
  if (parts.empty()) return;
  std::string rv, reason;
  if (!cache.listed(parts[0], &rv)) return;
  cache.events_done();
  auto watch = cache.watch(cache.resource_version(), [] {});
  std::uint64_t last = cache.resource_version();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    cache.event(parts[i], &rv, &reason);
    cache.events_done();
    fuzz::check(cache.resource_version() >= last, "the cache's resourceVersion went back");
    last = cache.resource_version();
  }
  auto snapshot = cache.snapshot();
  for (std::size_t i = 1; i < snapshot->objects.size(); ++i) {
    fuzz::check(snapshot->objects[i - 1]->key < snapshot->objects[i]->key,
                "a snapshot not sorted by key, or with a key twice");
  }
  if (watch.subscription) {
    auto events = watch.subscription->take();
    for (std::size_t i = 1; i < events.size(); ++i) {
      fuzz::check(events[i - 1]->position <= events[i]->position, "events out of order");
    }
  }
}

void continue_token(std::string_view token) {
  auto point = pool::decode_pool_continue(token);
  if (!point) return;
  auto back = pool::decode_pool_continue(
      pool::encode_pool_continue(point->resource_version, point->last_key));
  fuzz::check(back && back->resource_version == point->resource_version &&
                  back->last_key == point->last_key,
              "a continue token that does not survive encode + decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      feed_cache(rest);
      break;
    case 1:
      continue_token(rest);
      break;
    case 2: {
      pool::parse_pool_resources(rest);
      rapidjson::Document doc;
      if (base::parse_json(rest, doc)) pool::parse_leader_hub_config(doc);
      break;
    }
    default:
      pool::review_allows(rest);
      break;
  }
  return 0;
}
