// The node's shared list+watch per pool-scope resource; see shared_cache.h.
#include "pool/shared_cache.h"

#include <algorithm>

#include <boost/asio/this_coro.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "kube/media_type.h"
#include "kube/object_meta.h"
#include "kube/watch_list.h"
#include "net/http_io.h"
#include "net/timer.h"

namespace yurthub::pool {
namespace asio = boost::asio;

namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::vector<PoolResource> parse_pool_resources(std::string_view text, std::string* bad) {
  std::vector<PoolResource> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    const auto first = item.find('/');
    const auto second = first == std::string_view::npos ? first : item.find('/', first + 1);
    PoolResource r;
    if (second != std::string_view::npos && item.find('/', second + 1) == std::string_view::npos) {
      r.group = item.substr(0, first);
      r.version = item.substr(first + 1, second - first - 1);
      r.resource = item.substr(second + 1);
    }
    if (r.version.empty() || r.resource.empty()) {
      if (bad) *bad += (bad->empty() ? "" : ", ") + std::string(item);
      continue;
    }
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
  }
  return out;
}

SharedCache::SharedCache(SharedCacheOptions options, base::MetricsRegistry& metrics)
    : options_(std::move(options)),
      own_component_(lowercase(user_agent())),
      reviews_(metrics),
      entries_(std::make_shared<const Entries>()),
      in_flight_(metrics.gauge("node_yurthub_aggregated_in_flight_requests_collector",
                               "Lists and watches being answered from the shared watch cache "
                               "(YurtHub's multiplexer), by request and client.",
                               {"verb", "resource", "subresources", "client"})),
      in_flight_total_(metrics
                           .gauge("node_yurthub_aggregated_in_flight_requests_total",
                                  "Lists and watches being answered from the shared watch cache.",
                                  {})
                           .with({})),
      answers_(metrics.counter("node_yurthub_pool_answers_total",
                               "Pool-scope lists and watches, by whether the shared watch cache "
                               "answered them (shared) or they were forwarded, and why.",
                               {"resource", "verb", "answer"})),
      targets_(metrics.gauge("node_yurthub_target_for_multiplexer_requests_collector",
                             "The shared watch cache's own upstream watch per resource, by where "
                             "the hub serves it from (server: cloud, or cache when offline).",
                             {"verb", "resource", "subresources", "client", "server"})),
      fanned_out_(metrics.counter("node_yurthub_pool_events_fanned_out_total",
                                  "Events of the shared watch cache handed to local watches.",
                                  {"resource"})) {}

SharedCache::~SharedCache() { stop(); }

// Feeds the WatchCache, and counts where its watch is served from and the events fanned out.
// Feeds the WatchCache, counts where its watch is served from and the events fanned out, and,
// while fed by a leader (whose answers do not pass through this hub's node cache), keeps what it
// lists and watches in the node cache as the hub would have kept it, for an offline restart.
class SharedCache::MeteredSink final : public net::ReflectorSink {
 public:
  MeteredSink(SharedCache& owner, std::shared_ptr<WatchCache> cache, std::string resource,
              std::string path)
      : owner_(owner),
        cache_(std::move(cache)),
        resource_(std::move(resource)),
        path_(std::move(path)) {}
  Status listed(std::string_view body, std::string* resource_version) override {
    end_watch_tap();
    Status applied = cache_->listed(body, resource_version);
    if (applied && from_leader_) {
      if (auto tap = owner_.node_cache_tap(path_)) {
        tap->body(body);
        tap->end(true);
      }
    }
    return applied;
  }
  net::EventVerdict event(std::string_view raw, std::string* resource_version,
                          std::string* reason) override {
    const net::EventVerdict verdict = cache_->event(raw, resource_version, reason);
    if (watch_tap_ && verdict == net::EventVerdict::Ok) watch_tap_->event(raw);
    return verdict;
  }
  void events_done() override {
    cache_->events_done();
    if (watch_tap_) watch_tap_->events_done();
    const std::uint64_t delivered = cache_->events_delivered();
    if (delivered > counted_) owner_.fanned_out_.with({resource_}).inc(delivered - counted_);
    counted_ = delivered;
  }
  // The hub answers the reflector's watch from the cloud when an apiserver is healthy, else from
  // the node cache (a held-open offline watch); or a leader answers it.
  void watching() override {
    end_watch_tap();
    if (from_leader_) watch_tap_ = owner_.node_cache_tap(path_ + "?watch=true");
    const bool cloud = !owner_.online_ || owner_.online_();
    set_source(from_leader_ ? "leader" : cloud ? "cloud" : "cache");
  }
  void stopped() override {
    end_watch_tap();
    set_source("");
    used(false);
  }
  // The reflector's next request goes to a leader (or not).
  void used(bool leader) {
    if (leader == from_leader_) return;
    from_leader_ = leader;
    owner_.fed_by_leader_ += leader ? 1 : -1;
  }

 private:
  void set_source(std::string_view source) {
    for (const char* s : {"cloud", "cache", "leader"}) {
      owner_.targets_.with({"watch", resource_, "", owner_.user_agent(), s})
          .set(source == s ? 1 : 0);
    }
  }
  void end_watch_tap() {
    if (watch_tap_) watch_tap_->end(false);
    watch_tap_.reset();
  }
  SharedCache& owner_;
  std::shared_ptr<WatchCache> cache_;
  std::string resource_;
  std::string path_;
  std::uint64_t counted_ = 0;
  bool from_leader_ = false;
  std::unique_ptr<hub::ResponseTap> watch_tap_;  // while a leader's watch is kept
};

std::unique_ptr<hub::ResponseTap> SharedCache::node_cache_tap(const std::string& target) const {
  if (persist_ == nullptr) return nullptr;
  const kube::RequestInfo info = kube::classify_request("GET", target, user_agent());
  if (!persist_->cacheable(info)) return nullptr;
  return persist_->tap(info, 200);
}

void SharedCache::start(asio::any_io_executor executor, std::string proxy_host,
                        unsigned short proxy_port, std::function<bool()> online) {
  online_ = std::move(online);
  executor_ = std::move(executor);
  proxy_host_ = std::move(proxy_host);
  proxy_port_ = proxy_port;
  AccessReviewOptions reviews;
  reviews.proxy_host = proxy_host_;
  reviews.proxy_port = proxy_port_;
  reviews.user_agent = user_agent();
  reviews_.set_options(std::move(reviews));
}

void SharedCache::stop() {
  auto entries = entries_.exchange(std::make_shared<const Entries>());
  for (const auto& [name, entry] : *entries) entry->reflector->stop();
}

void SharedCache::set_resources(const std::vector<PoolResource>& resources) {
  auto current = entries_.load();
  auto next = std::make_shared<Entries>();
  for (const PoolResource& r : resources) {
    auto found = current->find(r.text());
    if (found != current->end()) {
      next->emplace(r.text(), found->second);
      continue;
    }
    auto entry = std::make_shared<Entry>();
    entry->resource = r;
    WatchCache::Options cache_options = options_.cache;
    cache_options.name = r.text();
    entry->cache = std::make_shared<WatchCache>(cache_options);
    net::ReflectorOptions o;
    o.name = "pool " + r.text();
    o.path = r.path();
    o.proxy_host = proxy_host_;
    o.proxy_port = proxy_port_;
    o.user_agent = user_agent();
    o.watch_timeout_min = options_.watch_timeout_min;
    o.backoff_max = std::chrono::seconds(5);
    auto sink = std::make_shared<MeteredSink>(*this, entry->cache, r.text(), r.path());
    if (leader_) {
      // A follower feeds from its leader while one is healthy (pool/leader_hubs.h).
      o.source = [this, sink] {
        auto leader = leader_();
        sink->used(leader.has_value());
        return leader ? *leader : net::SourceAddress{proxy_host_, proxy_port_, nullptr};
      };
    }
    entry->reflector = std::make_unique<net::Reflector>(executor_, std::move(o), sink);
    entry->reflector->start();
    YH_LOG(Info) << "shared watch cache: sharing " << r.text();
    next->emplace(r.text(), std::move(entry));
  }
  for (const auto& [name, entry] : *current) {
    if (next->count(name) > 0) continue;
    entry->reflector->stop();
    YH_LOG(Info) << "shared watch cache: no longer sharing " << name;
  }
  entries_.store(std::move(next));
}

void SharedCache::reconnect() {
  for (const auto& [name, entry] : *entries_.load()) entry->reflector->reconnect();
}

std::shared_ptr<WatchCache> SharedCache::cache_of(const PoolResource& resource) const {
  auto entries = entries_.load();
  auto it = entries->find(resource.text());
  return it == entries->end() ? nullptr : it->second->cache;
}

std::shared_ptr<SharedCache::Entry> SharedCache::find(const kube::RequestInfo& info) const {
  auto entries = entries_.load();
  if (entries->empty()) return nullptr;
  auto it = entries->find(info.api_group + "/" + info.api_version + "/" + info.resource);
  return it == entries->end() ? nullptr : it->second;
}

bool SharedCache::pool_scope(const kube::RequestInfo& info) const {
  if (!info.is_resource_request || !info.subresource.empty()) return false;
  if (info.verb != kube::Verb::List && info.verb != kube::Verb::Watch) return false;
  if (info.component == own_component_) return false;  // the reflectors' own requests
  return find(info) != nullptr;
}

bool SharedCache::answerable(const kube::RequestInfo& info, const WatchCache& cache) {
  if (!cache.synced() || !kube::accepts_json(info.accept) || info.sharded) return false;
  if (!info.continue_token.empty() && !is_pool_continue(info.continue_token)) return false;
  // Options the apiserver refuses get its 422 from it (whatever its version says of them).
  if (kube::invalid_list_options(info)) return false;
  if (kube::is_streaming_list(info)) {
    // The current objects, as the apiserver's watch cache sends them at any resourceVersion it
    // has reached: "" (its consistent read, which the cache stands in for as for a list), "0",
    // or one the cache has reached; a newer one is forwarded (the apiserver waits for it).
    if (info.resource_version.empty() || info.resource_version == "0") return true;
    const std::uint64_t wanted = kube::parse_resource_version(info.resource_version);
    return wanted != 0 && wanted <= cache.resource_version();
  }
  if (info.send_initial_events) return false;  // sendInitialEvents=false: forwarded
  if (info.resource_version.empty() || info.resource_version == "0") {
    return info.resource_version_match.empty() || info.resource_version_match == "NotOlderThan";
  }
  const std::uint64_t wanted = kube::parse_resource_version(info.resource_version);
  if (wanted == 0) return false;  // the apiserver's 400 for a malformed one
  if (info.verb == kube::Verb::Watch) return info.resource_version_match.empty();
  if (info.resource_version_match == "Exact") return wanted == cache.resource_version();
  return wanted <= cache.resource_version();  // NotOlderThan, the default with a version
}

asio::awaitable<bool> SharedCache::admit(const kube::RequestInfo& info) {
  auto entry = find(info);
  if (!entry) co_return false;
  // The hub has just started (or the resource was just added): every client of the node asks at
  // once, and each forwarded one would hold an upstream watch of its own.
  if (!info.bearer_token) co_await wait_for_first_list(*entry);
  const std::string verb(kube::verb_name(info.verb));
  const char* answer = nullptr;
  if (!entry->cache->synced()) {
    answer = "forwarded_unsynced";
  } else if (!answerable(info, *entry->cache)) {
    answer = "forwarded_query";
  } else if (info.bearer_token) {
    // Served only what the apiserver says this token may read (docs/pool-sharing.md).
    const bool allowed = co_await reviews_.allowed(info);
    if (!allowed) answer = "forwarded_token";
  }
  answers_.with({entry->resource.text(), verb, answer ? answer : "shared"}).inc();
  co_return answer == nullptr;
}

asio::awaitable<void> SharedCache::wait_for_first_list(const Entry& entry) const {
  // The clients wait a little for the one list instead (YurtHub answers 429 until then); not
  // once that list failed (offline with nothing cached: the request goes to the cache's offline
  // answer).
  net::Timer timer(co_await asio::this_coro::executor);
  const auto until = base::Clock::now() + options_.sync_wait;
  while (!entry.cache->synced() && !entry.reflector->tried() && base::Clock::now() < until) {
    timer.expires_after(std::chrono::milliseconds(50));
    co_await timer.async_wait(net::kNoThrow);
  }
}

bool SharedCache::pool_member(std::string_view node) const {
  return pool_member_ && pool_member_(node);
}

std::optional<std::string> SharedCache::unfit_to_lead() const {
  if (online_ && !online_()) return "no apiserver is reachable from this hub";
  if (fed_by_leader_.load() > 0) return "this hub feeds from a leader hub itself";
  auto entries = entries_.load();
  if (entries->empty()) return "no resource is shared";
  for (const auto& [name, entry] : *entries) {
    if (!entry->cache->synced()) return name + " has not been listed yet";
  }
  return std::nullopt;
}

asio::awaitable<bool> SharedCache::admit_follower(const kube::RequestInfo& info) {
  auto entry = find(info);
  if (!entry) co_return false;
  co_await wait_for_first_list(*entry);
  const bool served = answerable(info, *entry->cache);
  answers_
      .with({entry->resource.text(), std::string(kube::verb_name(info.verb)),
             served ? "follower" : "follower_refused"})
      .inc();
  co_return served;
}

asio::awaitable<unsigned> SharedCache::serve(const kube::RequestInfo& info,
                                             hub::ResponseWriter& writer) {
  auto entry = find(info);
  if (!entry) co_return 0;
  const std::string verb(kube::verb_name(info.verb));
  auto& series = in_flight_.with({verb, info.resource, info.subresource, info.user_agent});
  series.add(1);
  in_flight_total_.add(1);
  unsigned code = 0;
  if (info.verb == kube::Verb::Watch) {
    code = co_await serve_watch(*entry->cache, info, options_.serving, writer);
  } else {
    code = co_await serve_list(*entry->cache, *entry->pages, info, options_.serving, writer);
  }
  series.add(-1);
  in_flight_total_.add(-1);
  co_return code;
}

}  // namespace yurthub::pool
