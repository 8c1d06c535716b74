// The cache behind the hub's CacheHooks; see node_cache.h.
#include "cache/node_cache.h"

#include "base/clock.h"
#include "base/log.h"
#include "cache/response_taps.h"
#include "kube/media_type.h"
#include "kube/watch_list.h"
#include "net/http_io.h"

namespace yurthub::cache {
namespace {

// LMDB keys are at most 511 bytes. A list identity past this (a huge selector) is not cached at
// all: one unwritable list record would otherwise fail every group commit it is part of.
constexpr std::size_t kMaxIdentityKeyBytes = 400;

}  // namespace

Result<std::unique_ptr<NodeCache>> NodeCache::open(const Options& options,
                                                   base::MetricsRegistry& registry) {
  auto opened = open_lmdb_store_or_reset(options.store);
  auto& resets = registry.counter("node_yurthub_cache_resets_total",
                                  "Caches found corrupt or of another format at start, moved "
                                  "aside, and replaced by an empty one.",
                                  {});
  resets.with({}).inc(0);
  if (!opened) return opened.error();
  if (!opened->reset_reason.empty()) {
    // Everything cached is gone (it is kept aside for an operator); the node works online and
    // caches again from now on.
    YH_LOG(Error) << "cache: the store could not be used (" << opened->reset_reason
                  << "); it was moved to " << opened->moved_to << " and the hub starts with an "
                  << "empty cache";
    resets.with({}).inc();
  }
  auto caller_key = Callers::load_key(*opened->store);
  if (!caller_key) return caller_key.error();
  return std::unique_ptr<NodeCache>(
      new NodeCache(std::move(opened->store), std::move(*caller_key), options, registry));
}

NodeCache::NodeCache(std::unique_ptr<Store> store, std::string caller_key, const Options& options,
                     base::MetricsRegistry& registry)
    : store_(std::move(store)),
      metrics_(registry),
      writer_(std::make_unique<CacheWriter>(*store_, metrics_, options.writer)),
      taps_(std::make_unique<TapQueue>(options.writer.max_queue_bytes,
                                       &metrics_.tap_queue_bytes.with({}))),
      journal_(registry, options.journal),
      local_(*store_, metrics_, events_, options.offline),
      authority_(options.node_name.empty() ? std::nullopt
                                           : std::optional<NodeAuthority>(options.node_name)),
      issuer_keys_(*store_, *writer_, registry),
      callers_(*store_, *writer_, registry, std::move(caller_key), &base::WallClock::unix_seconds,
               &issuer_keys_),
      tokens_(*store_, *writer_, registry, &base::WallClock::unix_seconds),
      writes_(*writer_, *store_, journal_, events_, policy_, metrics_, tokens_, callers_,
              authority_ ? &*authority_ : nullptr),
      replay_(*store_, *writer_, journal_, options.replay) {
  journal_.load(*store_->read());
}

// Digests and commits what is queued before the store closes.
NodeCache::~NodeCache() {
  taps_.reset();
  writer_.reset();
}

void NodeCache::flush() {
  if (!taps_->drain(std::chrono::seconds(60))) YH_LOG(Warning) << "cache: lists still being read";
  writer_->flush();
}

bool NodeCache::is_discovery(const kube::RequestInfo& info) const {
  return !info.is_resource_request && info.verb == kube::Verb::Get &&
         is_cached_discovery_path(info.path);
}

bool NodeCache::keeps_answer(const kube::RequestInfo& info) const {
  // is_agent (a lock and a lookup) last: a read, what tap() mostly sees, is never a kept answer.
  return info.is_resource_request && agent_answer_kept(info) && policy_.is_agent(info.component);
}

bool NodeCache::agent_answer_kept(const kube::RequestInfo& info) {
  return node_write(info) || agent_token_request(info);
}

bool NodeCache::node_write(const kube::RequestInfo& info) {
  using kube::Verb;
  const bool create = info.verb == Verb::Create;
  const bool change = info.verb == Verb::Update || info.verb == Verb::Patch;
  if (!create && !change) return false;
  const bool core = info.api_group.empty();
  const bool object = info.subresource.empty();
  // Its Node (registration, status heartbeats, label and resource updates).
  if (core && info.resource == "nodes") return object || (change && info.subresource == "status");
  // Its pods' status (the status manager's patches).
  if (core && info.resource == "pods") return change && info.subresource == "status";
  // Its CSINode (created at kubelet's first start and then never read) and its lease.
  if (info.api_group == "storage.k8s.io" && info.resource == "csinodes") return object;
  if (info.api_group == "coordination.k8s.io" && info.resource == "leases")
    return object && info.verb != Verb::Patch;
  return false;
}

bool NodeCache::agent_token_request(const kube::RequestInfo& info) {
  return info.verb == kube::Verb::Create && info.api_group.empty() &&
         info.resource == "serviceaccounts" && info.subresource == "token";
}

bool NodeCache::wants_request_body(const kube::RequestInfo& info) const {
  // Only the node's TokenRequests are kept (for its pods' volumes after an offline reboot).
  return !info.bearer_token && info.is_resource_request && agent_token_request(info) &&
         policy_.is_agent(info.component);
}

bool NodeCache::cacheable(const kube::RequestInfo& info) const {
  // Asked of every proxied request; is_agent (it takes the policy's lock) is asked once.
  if (!info.is_resource_request) return is_discovery(info);
  if (!policy_.is_agent(info.component)) return false;
  if (agent_answer_kept(info)) return true;
  // A client that takes no JSON (CBOR only) is relayed untouched: asked as JSON for the cache,
  // its answer would be one it cannot read.
  return policy_.agent_request_cacheable(info) && kube::accepts_json_answer(info.accept);
}

std::unique_ptr<hub::ResponseTap> NodeCache::tap(const kube::RequestInfo& info, unsigned status,
                                                 std::string_view request_body) {
  // Kept as the identity that obtained it: the node's, or the caller's own token's, which the
  // apiserver has now accepted.
  const std::string owner = callers_.owner_of(info);
  if (info.bearer_token && status >= 200 && status < 300) callers_.accepted(info);
  if (keeps_answer(info)) return kept_answer_tap(info, status, request_body, owner);
  if (status != 200) return nullptr;
  if (is_discovery(info)) return make_discovery_tap(*writer_, metrics_, info.path);
  const auto too_long = [this](const std::string& key) {
    if (key.size() <= kMaxIdentityKeyBytes) return false;
    metrics_.failures.with({"identity_too_long"}).inc();
    return true;
  };
  if (info.verb == kube::Verb::Get) {
    // The GET set's key, written at once: a GET is the most common cached request, and building
    // its whole ListIdentity first cost as much as the rest of the tap.
    std::string key = ListIdentity::get_set_key(info.component, info.api_group, info.api_version,
                                                info.resource, owner);
    if (too_long(key)) return nullptr;
    return make_get_tap(*writer_, metrics_, std::move(key), info.namespace_name, info.name);
  }
  auto identity = policy_.identity(info);
  if (!identity) return nullptr;
  identity->owner = owner;
  std::string key = identity->key();
  if (too_long(key)) return nullptr;
  if (info.verb == kube::Verb::List) {
    remember_listed(key);
    return make_list_tap(*writer_, metrics_, *identity, info, taps_.get());
  }
  if (kube::is_streaming_list(info)) remember_listed(key);
  return make_watch_tap(*writer_, metrics_, *identity, info, watch_starts_stale(info, key),
                        taps_.get());
}

std::unique_ptr<hub::ResponseTap> NodeCache::kept_answer_tap(const kube::RequestInfo& info,
                                                             unsigned status,
                                                             std::string_view request_body,
                                                             const std::string& owner) {
  // The answers to what the node writes (so that an offline restart finds its Node, its
  // CSINode, its lease and its pods' last status, although kubelet never reads some of them
  // back) and TokenRequest answers (so pods mount their tokens after an offline reboot). Each
  // answer is the object as the apiserver stored it, kept in the resource's "get" set as a GET
  // of it would be.
  if (status != 200 && status != 201) return nullptr;
  if (!agent_token_request(info)) {
    return make_object_tap(*writer_, metrics_,
                           ListIdentity{info.component, info.api_group, info.api_version,
                                        info.resource, "", "", "", owner}
                               .get_set());
  }
  if (!wants_request_body(info)) return nullptr;  // a caller's own TokenRequest
  auto key = read_token_request(info, std::string_view(info.content_type), request_body);
  if (!key || status != 201) return nullptr;
  // A token for the apiserver's own audience (none asked) is what a pod's projected volume
  // holds: offline, the pod may read its service account's data with it.
  std::function<void(std::string_view)> issued;
  if (key->audiences.empty()) issued = [this](std::string_view t) { callers_.issued(t); };
  return tokens_.tap(*key, std::move(issued));
}

void NodeCache::remember_listed(const std::string& key) {
  std::lock_guard lock(listed_mutex_);
  if (listed_.size() >= kMaxListedRemembered) listed_.clear();
  listed_.insert(key);
}

bool NodeCache::watch_starts_stale(const kube::RequestInfo& info, const std::string& key) {
  // A streaming list is the list that rebuilds the set: it never starts failed, whatever the set.
  if (kube::is_streaming_list(info)) return false;
  // A watch on a list whose cache missed a write starts "failed": the hub ends it with 410
  // Expired at once, so the client re-lists and the cache is rebuilt. So does a watch that
  // resumes (from a resourceVersion) a list the cache does not have: evicted, or written before
  // the cache recorded owners; a watch from now (no resourceVersion, or "0") just starts.
  auto record = store_->read()->list(key);
  const bool resumes = !info.resource_version.empty() && info.resource_version != "0";
  bool unknown = !record && resumes;
  if (unknown) {  // a list this run relayed may not be committed yet
    std::lock_guard lock(listed_mutex_);
    unknown = listed_.count(key) == 0;
  }
  return (record && record->stale) || writer_->known_stale(key) || unknown;
}

bool NodeCache::serves_offline(const kube::RequestInfo& info) const {
  // Reads only: a kept answer (lease write, TokenRequest) is a write, answered by
  // serve_offline_write.
  return policy_.cacheable(info) || is_discovery(info);
}

boost::asio::awaitable<unsigned> NodeCache::serve_offline(const kube::RequestInfo& info,
                                                          hub::ResponseWriter& writer) {
  // A caller's token must be one the apiserver accepted; it reads only what that token's owner
  // obtained online, as the apiserver would have answered it.
  auto verdict = callers_.verify(info);
  if (auto* refused = std::get_if<kube::ApiError>(&verdict)) {
    const kube::ApiError error = *refused;
    const unsigned code = co_await send_status(writer, error);
    metrics_.offline_requests.with({kube::verb_name(info.verb), std::to_string(code)}).inc();
    co_return code;
  }
  if (!kube::accepts_json_answer(info.accept)) {
    // The hub answers offline in JSON only (client-go reads it whatever it asked for).
    const unsigned code = co_await send_api_error(writer, kube::Failure::NotAcceptable,
                                                  "application/json (the node is offline)");
    metrics_.offline_requests.with({kube::verb_name(info.verb), std::to_string(code)}).inc();
    co_return code;
  }
  std::optional<ListIdentity> identity;
  if (!is_discovery(info)) {
    identity = policy_.identity(info);
    if (!identity) identity = ListIdentity{};  // unparseable selector: answered as "not cached"
    identity->owner = std::get<std::string>(verdict);
  }
  co_return co_await local_.serve(info, identity, writer);
}

bool NodeCache::serves_offline_write(const kube::RequestInfo& info) const {
  return writes_.handles(info);
}

boost::asio::awaitable<void> NodeCache::wait_for_lists() {
  // A list relayed before the link dropped may still be digested: its set would replace the
  // object this write changes with the version listed. Digesting even kubelet's 19 MiB pod list
  // takes a fraction of a second; the wait is bounded all the same.
  const bool caught_up = co_await taps_->caught_up(std::chrono::seconds(2));
  if (!caught_up) YH_LOG(Warning) << "cache: an offline write did not wait for a list's digest";
}

boost::asio::awaitable<unsigned> NodeCache::serve_offline_write(const kube::RequestInfo& info,
                                                                const hub::OfflineWrite& write,
                                                                hub::ResponseWriter& writer) {
  co_await wait_for_lists();
  co_return co_await writes_.serve(info, write, writer);
}

bool NodeCache::write_pending(const kube::RequestInfo& info) const {
  if (!info.is_resource_request || info.name.empty() || journal_.empty()) return false;
  return journal_.pending(journal_object_key(info.api_group, info.api_version, info.resource,
                                             info.namespace_name, info.name));
}

CacheHealth NodeCache::health() const {
  const ErrorKeys& keys = metrics_.error_keys;
  if (keys.size() == 0 && keys.persisted()) return {};
  return {CacheHealth::State::Failing, keys.summary()};
}

void NodeCache::start_replay(hub::ReplayContext context) {
  issuer_keys_.start(context);
  replay_.start(std::move(context));
}

void NodeCache::stop_replay() {
  issuer_keys_.stop();
  replay_.stop();
  writer_->wait_tasks();
}

}  // namespace yurthub::cache
