// Lists and watches from a WatchCache; see shared_serving.h.
#include "pool/shared_serving.h"

#include <algorithm>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/base64.h"
#include "base/clock.h"
#include "base/json_parse.h"
#include "cache/local_answer.h"
#include "kube/object_meta.h"
#include "kube/selector.h"
#include "kube/watch_list.h"

namespace yurthub::pool {
namespace asio = boost::asio;

namespace {

constexpr std::size_t kKeptSnapshots = 4;
constexpr auto kSnapshotKeep = std::chrono::seconds(60);

// What one request selects: its namespace, the object it names, its selectors.
class Selection {
 public:
  Selection(const kube::RequestInfo& info, kube::LabelSelector label, kube::FieldSelector field)
      : info_(info), label_(std::move(label)), field_(std::move(field)) {}

  bool matches(const CachedObject& object) const {
    if (!info_.namespace_name.empty() && object.namespace_name != info_.namespace_name)
      return false;
    if (!info_.name.empty() && object.name != info_.name) return false;
    if (label_.empty() && field_.empty()) return true;
    rapidjson::Document doc;
    if (!base::parse_json(object.json, doc) || !doc.IsObject()) return false;
    return label_.matches_object(doc) && field_.matches(doc, info_.api_group, info_.resource);
  }

 private:
  const kube::RequestInfo& info_;
  kube::LabelSelector label_;
  kube::FieldSelector field_;
};

// The object as a watch event carries it: with kind and apiVersion.
std::string event_object(const CachedObject& object, const std::string& kind,
                         const std::string& api_version) {
  const std::string& json = object.json;
  if (json.size() < 2 || json[0] != '{' || json.compare(0, 7, "{\"kind\"") == 0) return json;
  const bool empty = json.find_first_not_of(" \t\r\n", 1) == json.size() - 1;
  return "{\"kind\":" + cache::quoted(kind) + ",\"apiVersion\":" + cache::quoted(api_version) +
         (empty ? "" : ",") + json.substr(1);
}

std::string event_line(std::string_view type, const CachedObject& object, const std::string& kind,
                       const std::string& api_version) {
  std::string line = R"({"type":")";
  line.append(type).append(R"(","object":)");
  line += event_object(object, kind, api_version);
  line += "}\n";
  return line;
}

// What a watch with this selection shows of `event`: its type, or nothing.
std::optional<std::string_view> shown_as(const CacheEvent& event, const Selection& selection) {
  const bool is = selection.matches(*event.object);
  if (event.type == CacheEvent::Type::Deleted) {
    return is ? std::optional<std::string_view>("DELETED") : std::nullopt;
  }
  const bool was = event.previous && selection.matches(*event.previous);
  if (is && was) return "MODIFIED";
  if (is) return "ADDED";
  if (was) return "DELETED";
  return std::nullopt;
}

// Writes what the selection shows of `events`; false when the client is gone.
asio::awaitable<bool> send_events(const std::vector<EventPtr>& events, const Selection& selection,
                                  const std::string& kind, const std::string& api_version,
                                  hub::ResponseWriter& out) {
  for (const EventPtr& e : events) {
    auto type = shown_as(*e, selection);
    if (!type) continue;
    const std::string line = event_line(*type, *e->object, kind, api_version);
    if (!co_await out.write(line)) co_return false;
  }
  co_return true;
}

}  // namespace

void PagedSnapshots::keep(const std::shared_ptr<const CacheSnapshot>& snapshot) {
  std::lock_guard lock(mutex_);
  const auto now = base::Clock::now();
  while (!kept_.empty() && (kept_.size() >= kKeptSnapshots || kept_.front().until < now)) {
    kept_.pop_front();
  }
  for (Kept& k : kept_) {
    if (k.snapshot == snapshot) {
      k.until = now + kSnapshotKeep;
      return;
    }
  }
  kept_.push_back({snapshot, now + kSnapshotKeep});
}

std::shared_ptr<const CacheSnapshot> PagedSnapshots::find(std::uint64_t resource_version) {
  std::lock_guard lock(mutex_);
  for (const Kept& k : kept_) {
    if (k.snapshot->resource_version == resource_version) return k.snapshot;
  }
  return nullptr;
}

std::string encode_pool_continue(std::uint64_t resource_version, const std::string& last_key) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("rv");
  w.Uint64(resource_version);
  w.Key("k");
  w.String(last_key.c_str(), static_cast<rapidjson::SizeType>(last_key.size()));
  w.EndObject();
  return "yp1." + base::encode_base64url({buf.GetString(), buf.GetSize()});
}

std::optional<PoolContinue> decode_pool_continue(std::string_view token) {
  if (!is_pool_continue(token)) return std::nullopt;
  auto raw = base::decode_base64url(token.substr(4));
  if (!raw) return std::nullopt;
  rapidjson::Document doc;
  if (!base::parse_json(*raw, doc) || !doc.IsObject() || !doc.HasMember("rv") ||
      !doc["rv"].IsUint64() || !doc.HasMember("k") || !doc["k"].IsString()) {
    return std::nullopt;
  }
  return PoolContinue{doc["rv"].GetUint64(), doc["k"].GetString()};
}

asio::awaitable<unsigned> serve_list(WatchCache& cache, PagedSnapshots& pages,
                                     const kube::RequestInfo& info, const ServingOptions& options,
                                     hub::ResponseWriter& out) {
  if (auto bad = cache::invalid_selector(info)) {
    co_return co_await cache::send_status(out, kube::bad_request_error(*bad));
  }
  Selection selection(info, *kube::LabelSelector::parse(info.label_selector),
                      *kube::FieldSelector::parse(info.field_selector));
  std::shared_ptr<const CacheSnapshot> snapshot;
  std::string after;  // the last key of the previous page
  if (!info.continue_token.empty()) {
    auto point = decode_pool_continue(info.continue_token);
    if (point) snapshot = pages.find(point->resource_version);
    if (!snapshot) {
      co_return co_await cache::send_api_error(
          out, kube::Failure::Expired,
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter.");
    }
    after = point->last_key;
  } else {
    snapshot = cache.snapshot();
  }
  // As the apiserver's watch cache, resourceVersion=0 ignores the limit.
  const bool paged = info.limit && *info.limit > 0 && info.resource_version != "0";
  const std::size_t limit = paged ? static_cast<std::size_t>(*info.limit) : 0;

  std::vector<const CachedObject*> items;
  bool more = false;
  auto it =
      std::upper_bound(snapshot->objects.begin(), snapshot->objects.end(), after,
                       [](const std::string& key, const ObjectPtr& o) { return key < o->key; });
  if (after.empty()) it = snapshot->objects.begin();
  for (; it != snapshot->objects.end(); ++it) {
    if (!selection.matches(**it)) continue;
    if (limit && items.size() == limit) {
      more = true;
      break;
    }
    items.push_back(it->get());
  }
  std::string continue_token;
  if (more) {
    pages.keep(snapshot);
    continue_token = encode_pool_continue(snapshot->resource_version, items.back()->key);
  }
  std::string piece = cache::list_head(snapshot->kind + "List", snapshot->api_version,
                                       snapshot->resource_version, continue_token);
  const bool started = co_await out.start(200, "application/json");
  if (!started) co_return 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) piece += ',';
    piece += items[i]->json;
    if (piece.size() >= options.write_bytes) {
      if (!co_await out.write(piece)) co_return 200;
      piece.clear();
    }
  }
  piece += "]}";
  if (!co_await out.write(piece)) co_return 200;
  co_await out.finish();
  co_return 200;
}

asio::awaitable<unsigned> serve_watch(WatchCache& cache, const kube::RequestInfo& info,
                                      const ServingOptions& options, hub::ResponseWriter& out) {
  if (auto bad = cache::invalid_selector(info)) {
    co_return co_await cache::send_status(out, kube::bad_request_error(*bad));
  }
  Selection selection(info, *kube::LabelSelector::parse(info.label_selector),
                      *kube::FieldSelector::parse(info.field_selector));
  // A streaming list starts from the current objects whatever its resourceVersion (SharedCache
  // admits one only at a version the cache has reached).
  std::optional<std::uint64_t> from;
  if (!info.resource_version.empty() && info.resource_version != "0" &&
      !kube::is_streaming_list(info)) {
    from = kube::parse_resource_version(info.resource_version);
  }
  WatchCache::Start start = cache.watch(from, out.waker());
  const std::string kind = cache.kind();
  const std::string api_version = cache.api_version();
  const bool started = co_await out.start(200, "application/json");
  if (!started) co_return 0;
  if (start.expired) {
    const std::string gone = kube::watch_error_event(kube::api_error(
        kube::Failure::Expired, "too old resource version: " + info.resource_version + " (" +
                                    std::to_string(cache.resource_version()) + ")"));
    co_await out.write(gone);
    co_await out.finish();
    co_return 200;
  }
  if (start.initial) {
    for (const ObjectPtr& object : start.initial->objects) {
      if (!selection.matches(*object)) continue;
      const std::string line = event_line("ADDED", *object, kind, api_version);
      if (!co_await out.write(line)) co_return 200;
    }
    // A streaming list's initial events end with the annotated BOOKMARK at the snapshot's
    // resourceVersion, right after them (kube-apiserver 1.32+), when the client allows bookmarks.
    if (kube::is_streaming_list(info) && info.allow_watch_bookmarks) {
      const std::string end =
          kube::initial_events_end_bookmark(kind, api_version, start.initial->resource_version);
      if (!co_await out.write(end)) co_return 200;
    }
  }
  bool open = co_await send_events(start.backlog, selection, kind, api_version, out);
  if (!open) co_return 200;

  const auto deadline = cache::watch_deadline(info, options.min_request_timeout);
  auto next_bookmark = base::Clock::now() + options.bookmark_interval;
  for (;;) {
    const auto now = base::Clock::now();
    if (now >= deadline) break;
    const auto wake = info.allow_watch_bookmarks ? std::min(deadline, next_bookmark) : deadline;
    if (auto reason = co_await out.wait_until(wake)) break;  // the client left, the hub drains
    if (start.subscription->overflowed()) break;  // the client re-watches from where it was
    const std::vector<EventPtr> events = start.subscription->take();
    open = co_await send_events(events, selection, kind, api_version, out);
    if (!open) co_return 200;
    if (info.allow_watch_bookmarks && base::Clock::now() >= next_bookmark) {
      next_bookmark = base::Clock::now() + options.bookmark_interval;
      const std::string bookmark =
          cache::bookmark_event(kind, api_version, cache.resource_version());
      if (!co_await out.write(bookmark)) co_return 200;
    }
  }
  co_await out.finish();
  co_return 200;
}

}  // namespace yurthub::pool
