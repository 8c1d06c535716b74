// Informer: a reflector (client-go tools/cache/reflector.go) over the hub's own proxy port; see
// informer.h. list -> watch from the list's resourceVersion -> re-watch from the last seen one on
// a clean end; re-list on 410 Gone; back off and re-list on any other failure.
//
// Lifetime: everything the loop touches lives in Informer::State, which the loop's coroutine owns
// through a shared_ptr of its own. ~Informer only requests a stop; the coroutine, woken by the
// cancelled socket or timer, sees the flag and exits, so it never reaches a destroyed Informer.
// Threading: State's plain members are touched only on the executor (stop() dispatches there);
// the snapshot and the flags that other threads read are atomics.
#include "net/informer.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include "net/timed_socket.h"
#include "net/timer.h"

#include "base/clock.h"
#include "base/json_frames.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/result.h"
#include "base/url.h"
#include "net/http_io.h"

namespace yurthub::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = base::Clock;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(5);
constexpr auto kListTimeout = std::chrono::seconds(60);
constexpr auto kWatchDeadlineMargin = std::chrono::seconds(30);
// The hub's own lists are small (one ConfigMap, one node, the pool's services).
constexpr std::size_t kMaxListBytes = 64 * 1024 * 1024;
constexpr std::size_t kReadPieceBytes = 16 * 1024;
// client-go treats a watch closed within a second with no event as an error ("very short
// watch"), so a server that ends every watch at once is not hammered.
constexpr auto kShortWatch = std::chrono::seconds(1);
// Repeated failures (e.g. for as long as the node is offline) and routine re-lists are logged
// at most this often.
constexpr auto kLogInterval = std::chrono::seconds(60);

const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* m = member(v, name);
  return m && m->IsString() ? std::string(m->GetString(), m->GetStringLength()) : std::string();
}

std::string resource_version_of(const rapidjson::Value& object) {
  const rapidjson::Value* meta = member(object, "metadata");
  return meta ? string_member(*meta, "resourceVersion") : std::string();
}

// "namespace/name", "name" when cluster-scoped, "" when the object has no name.
std::string key_of(const rapidjson::Value& object) {
  const rapidjson::Value* meta = member(object, "metadata");
  if (!meta) return {};
  std::string name = string_member(*meta, "name");
  if (name.empty()) return {};
  std::string ns = string_member(*meta, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

// A list item as its own Document. List items carry no kind/apiVersion: they are added (from the
// list's "ConfigMapList" and apiVersion) so objects look alike whether listed or watched.
std::shared_ptr<const rapidjson::Document> copy_item(const rapidjson::Value& item,
                                                     const std::string& kind,
                                                     const std::string& api_version) {
  auto doc = std::make_shared<rapidjson::Document>();
  auto& alloc = doc->GetAllocator();
  doc->CopyFrom(item, alloc);
  if (!kind.empty() && doc->IsObject() && !doc->HasMember("kind")) {
    doc->AddMember("kind", rapidjson::Value(kind, alloc), alloc);
    doc->AddMember("apiVersion", rapidjson::Value(api_version, alloc), alloc);
  }
  return doc;
}

// The `message` of a Kubernetes Status body, else the start of the body.
std::string status_message(std::string_view body) {
  rapidjson::Document doc;
  if (base::parse_json(body, doc)) {
    std::string message = string_member(doc, "message");
    if (!message.empty()) return message;
  }
  return std::string(body.substr(0, 200));
}

}  // namespace

class Informer::State {
 public:
  State(asio::any_io_executor executor, InformerOptions options, OnChange on_change)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        on_change_(std::move(on_change)),
        backoff_timer_(executor_),
        objects_(std::make_shared<const ObjectMap>()),
        backoff_(options_.backoff_initial),
        rng_(std::random_device{}()) {
    snapshot.store(objects_);
  }

  static asio::awaitable<void> run(std::shared_ptr<State> self) { co_await self->loop(); }
  // Runs when the loop's coroutine has ended, however it ended.
  void exited(const std::exception_ptr& error);
  // REQUIRES: on the executor.
  void request_stop();
  const asio::any_io_executor& executor() const { return executor_; }

  std::atomic<bool> running{false};
  std::atomic<bool> synced{false};
  std::atomic<bool> missing{false};
  std::atomic<ObjectSnapshot> snapshot;

 private:
  enum class WatchEnd { Rewatch, Relist, Failed };
  enum class EventResult { Ok, Relist, Failed };

  asio::awaitable<void> loop();
  asio::awaitable<Status> list();
  asio::awaitable<WatchEnd> watch(std::string& reason);
  asio::awaitable<WatchEnd> read_events(http::response_parser<http::buffer_body>& parser,
                                        beast::flat_buffer& buffer, std::string& reason);
  asio::awaitable<Status> send(const std::string& target, Clock::duration deadline);
  // Waits the current backoff (at most `cap`), then doubles it up to `cap`.
  asio::awaitable<void> back_off(std::chrono::milliseconds cap);
  Status apply_list(const std::string& body);
  EventResult apply_event(std::string_view raw, std::optional<ObjectMap>& working,
                          std::string& reason);
  void publish(ObjectSnapshot next);
  std::string target(std::optional<long> watch_timeout_seconds) const;
  void note_failure(const char* what, const std::string& reason);
  void note_watch_established();
  void note_listed(std::size_t count);

  asio::any_io_executor executor_;
  InformerOptions options_;
  OnChange on_change_;
  net::Timer backoff_timer_;
  std::optional<net::TimedSocket> stream_;  // the connection of the request in flight
  bool stop_requested_ = false;
  ObjectSnapshot objects_;        // the map last published
  std::string resource_version_;  // the last one seen (list, event or bookmark)
  std::size_t watch_events_ = 0;  // events of the current watch (ERROR excluded)
  std::chrono::milliseconds backoff_;
  std::minstd_rand rng_;
  int failures_ = 0;  // consecutive, since a watch was last established
  bool listed_once_ = false;
  Clock::time_point last_failure_log_{};
  Clock::time_point last_list_log_{};
};

void Informer::State::exited(const std::exception_ptr& error) {
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      YH_LOG(Error) << "informer " << options_.name << ": stopped by an exception: " << e.what();
    } catch (...) {
      YH_LOG(Error) << "informer " << options_.name << ": stopped by an unknown exception";
    }
  }
  stop_requested_ = true;
  stream_.reset();
  on_change_ = nullptr;  // releases whatever the owner captured; nothing can call it any more
  running = false;
}

void Informer::State::request_stop() {
  stop_requested_ = true;
  backoff_timer_.cancel();
  if (stream_) stream_->close();  // a pending connect/read/write completes with an error now
}

asio::awaitable<void> Informer::State::loop() {
  while (!stop_requested_) {
    auto listed = co_await list();
    if (stop_requested_) co_return;
    if (!listed && missing.load()) {
      // Backs off as for a failure (the 404 may have come from the hub's cache in a moment
      // offline), but quietly and at most every missing_retry.
      co_await back_off(options_.missing_retry);
      continue;
    }
    if (!listed) {
      note_failure("list", listed.error().message);
      co_await back_off(options_.backoff_max);
      continue;
    }
    for (;;) {
      std::string reason;
      const auto started = Clock::now();
      const WatchEnd end = co_await watch(reason);
      if (stop_requested_) co_return;
      const bool quick = watch_events_ == 0 && Clock::now() - started < kShortWatch;
      if (end == WatchEnd::Rewatch && !quick) continue;
      if (end == WatchEnd::Relist && !quick) {
        YH_LOG(Info) << "informer " << options_.name << ": watch expired (" << reason
                     << "), re-listing";
        break;
      }
      if (end != WatchEnd::Failed) {
        reason = "watch ended within a second without events" +
                 (end == WatchEnd::Relist ? " (expired: " + reason + ")" : std::string());
      }
      note_failure("watch", reason);
      co_await back_off(options_.backoff_max);
      break;
    }
  }
}

asio::awaitable<void> Informer::State::back_off(std::chrono::milliseconds cap) {
  backoff_timer_.expires_after(std::min(backoff_, cap));
  backoff_ = std::min(backoff_ * 2, cap);
  co_await backoff_timer_.async_wait(kNoThrow);
}

std::string Informer::State::target(std::optional<long> watch_timeout_seconds) const {
  std::string t = options_.path;
  if (!options_.label_selector.empty()) {
    base::append_query_param(t, "labelSelector", options_.label_selector);
  }
  if (!options_.field_selector.empty()) {
    base::append_query_param(t, "fieldSelector", options_.field_selector);
  }
  if (watch_timeout_seconds) {
    base::append_query_param(t, "allowWatchBookmarks", "true");
    base::append_query_param(t, "resourceVersion", resource_version_);
    base::append_query_param(t, "timeoutSeconds", std::to_string(*watch_timeout_seconds));
    base::append_query_param(t, "watch", "true");
  }
  return t;
}

// Connects to the proxy port and writes a GET for `target`. `deadline` (from after the connect)
// bounds the write and everything the caller then reads.
asio::awaitable<Status> Informer::State::send(const std::string& target, Clock::duration deadline) {
  const std::string where =
      base::host_port(options_.proxy_host, std::to_string(options_.proxy_port));
  // The proxy port is the hub's own bind address (YurtHub's --bind-address is an IP).
  boost::system::error_code aec;
  const auto address = asio::ip::make_address(options_.proxy_host, aec);
  if (aec) co_return make_error("proxy host " + options_.proxy_host + " is not an IP address");
  stream_.emplace(executor_);
  stream_->expires_after(kConnectTimeout);
  const tcp::endpoint endpoint(address, options_.proxy_port);
  auto [cec] = co_await stream_->async_connect(endpoint, kNoThrow);
  if (stop_requested_) co_return Status{};
  if (cec) co_return make_error("connecting to " + where + ": " + cec.message());

  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, where);
  req.set(http::field::user_agent, options_.user_agent);
  req.set(http::field::accept, "application/json");
  req.keep_alive(false);
  stream_->expires_after(deadline);
  auto [wec, wn] = co_await http::async_write(*stream_, req, kNoThrow);
  if (wec && !stop_requested_) co_return make_error("sending GET " + target + ": " + wec.message());
  co_return Status{};
}

asio::awaitable<Status> Informer::State::list() {
  const std::string t = target(std::nullopt);
  auto sent = co_await send(t, kListTimeout);
  if (!sent || stop_requested_) co_return sent;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxListBytes);
  auto [ec, n] = co_await http::async_read(*stream_, buffer, parser, kNoThrow);
  if (stop_requested_) co_return Status{};
  stream_.reset();
  if (ec == http::error::body_limit) {
    co_return make_error("GET " + t + ": response larger than " +
                         std::to_string(kMaxListBytes >> 20) + " MiB");
  }
  if (ec) co_return make_error("GET " + t + ": reading the response: " + ec.message());
  const unsigned code = parser.get().result_int();
  if (code == 404 && options_.missing_is_empty) {
    if (!missing.exchange(true)) {
      YH_LOG(Info) << "informer " << options_.name << ": GET " << t
                   << " is not found; taken as empty until it is found";
    }
    const bool changed = !listed_once_ || !objects_->empty();
    listed_once_ = true;
    synced = true;
    if (changed) publish(std::make_shared<const ObjectMap>());
    co_return make_error("not found");
  }
  missing = false;
  if (code != 200) {
    co_return make_error("GET " + t + ": HTTP " + std::to_string(code) + ": " +
                         status_message(parser.get().body()));
  }
  co_return apply_list(parser.get().body());
}

// Replaces the map with the list's items. Objects whose resourceVersion did not change keep
// their Document, and a re-list that changes nothing publishes nothing.
Status Informer::State::apply_list(const std::string& body) {
  rapidjson::Document list;
  if (Status parsed = base::parse_json(body, list); !parsed) {
    return make_error("list is not a JSON object: " + parsed.error().message);
  }
  if (!list.IsObject()) return make_error("list is not a JSON object");
  const rapidjson::Value* items = member(list, "items");
  if (!items || !(items->IsArray() || items->IsNull())) return make_error("list has no items");
  std::string version = resource_version_of(list);
  if (version.empty()) return make_error("list has no metadata.resourceVersion");
  std::string kind = string_member(list, "kind");
  kind = kind.size() > 4 && kind.ends_with("List") ? kind.substr(0, kind.size() - 4) : "";
  const std::string api_version = string_member(list, "apiVersion");

  auto next = std::make_shared<ObjectMap>();
  bool changed = !listed_once_;
  std::size_t unnamed = 0;
  static const rapidjson::Value kNoItems(rapidjson::kArrayType);  // "items": null (Go's nil slice)
  for (const auto& item : (items->IsArray() ? *items : kNoItems).GetArray()) {
    std::string key = key_of(item);
    if (key.empty()) {
      ++unnamed;
      continue;
    }
    auto old = objects_->find(key);
    const std::string item_version = resource_version_of(item);
    if (old != objects_->end() && !item_version.empty() &&
        resource_version_of(*old->second) == item_version) {
      next->insert_or_assign(std::move(key), old->second);
      continue;
    }
    changed = true;
    next->insert_or_assign(std::move(key), copy_item(item, kind, api_version));
  }
  if (unnamed > 0) {
    YH_LOG(Warning) << "informer " << options_.name << ": ignored " << unnamed
                    << " listed objects without metadata.name";
  }
  changed = changed || next->size() != objects_->size();
  resource_version_ = std::move(version);
  listed_once_ = true;
  synced = true;
  note_listed(next->size());
  if (changed) publish(std::move(next));
  return Status{};
}

asio::awaitable<Informer::State::WatchEnd> Informer::State::watch(std::string& reason) {
  const long min_seconds = std::max<long>(1, options_.watch_timeout_min.count());
  const long timeout = std::uniform_int_distribution<long>(min_seconds, 2 * min_seconds - 1)(rng_);
  const std::string t = target(timeout);
  watch_events_ = 0;
  auto sent = co_await send(t, std::chrono::seconds(timeout) + kWatchDeadlineMargin);
  if (stop_requested_) co_return WatchEnd::Failed;
  if (!sent) {
    reason = sent.error().message;
    co_return WatchEnd::Failed;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  auto [ec, n] = co_await http::async_read_header(*stream_, buffer, parser, kNoThrow);
  if (stop_requested_) co_return WatchEnd::Failed;
  if (ec) {
    reason = "GET " + t + ": reading the response: " + ec.message();
    co_return WatchEnd::Failed;
  }
  const unsigned code = parser.get().result_int();
  if (code != 200) {
    stream_.reset();
    reason = "GET " + t + ": HTTP " + std::to_string(code);
    co_return code == 410 ? WatchEnd::Relist : WatchEnd::Failed;
  }
  note_watch_established();
  const WatchEnd end = co_await read_events(parser, buffer, reason);
  if (!stop_requested_) stream_.reset();
  co_return end;
}

// Reads the watch body piece by piece, applying each event as soon as it is complete. The events
// of one piece are published together (one snapshot per piece, not per event).
asio::awaitable<Informer::State::WatchEnd> Informer::State::read_events(
    http::response_parser<http::buffer_body>& parser, beast::flat_buffer& buffer,
    std::string& reason) {
  base::WatchFramer framer;
  std::vector<char> piece(kReadPieceBytes);
  EventResult result = EventResult::Ok;
  while (!parser.is_done()) {
    auto& body = parser.get().body();
    body.data = piece.data();
    body.size = piece.size();
    auto [ec, n] = co_await http::async_read_some(*stream_, buffer, parser, kNoThrow);
    if (stop_requested_) co_return WatchEnd::Failed;
    if (ec == http::error::need_buffer) ec = {};
    const std::size_t got = piece.size() - parser.get().body().size;
    std::optional<ObjectMap> working;  // copy-on-write: made by the first event that changes it
    Status fed = framer.feed({piece.data(), got}, [&](std::string_view raw) {
      if (result == EventResult::Ok) result = apply_event(raw, working, reason);
    });
    if (working) publish(std::make_shared<const ObjectMap>(std::move(*working)));
    if (stop_requested_) co_return WatchEnd::Failed;
    if (result != EventResult::Ok) {
      co_return result == EventResult::Relist ? WatchEnd::Relist : WatchEnd::Failed;
    }
    if (!fed) {
      reason = "malformed watch stream: " + fed.error().message;
      co_return WatchEnd::Failed;
    }
    if (ec) {
      reason = ec == beast::error::timeout ? "watch outlived its deadline"
                                           : "watch stream broke: " + ec.message();
      co_return WatchEnd::Failed;
    }
  }
  co_return WatchEnd::Rewatch;
}

Informer::State::EventResult Informer::State::apply_event(std::string_view raw,
                                                          std::optional<ObjectMap>& working,
                                                          std::string& reason) {
  rapidjson::Document event;
  const rapidjson::Value* object = base::parse_json(raw, event) ? member(event, "object") : nullptr;
  if (!object || !object->IsObject()) {
    reason = "watch event without an object: " + std::string(raw.substr(0, 200));
    return EventResult::Failed;
  }
  const std::string type = string_member(event, "type");
  if (type == "ERROR") {
    const rapidjson::Value* code = member(*object, "code");
    const int status = code && code->IsInt() ? code->GetInt() : 0;
    reason = "ERROR event " + std::to_string(status) + ": " + string_member(*object, "message");
    return status == 410 ? EventResult::Relist : EventResult::Failed;
  }
  std::string version = resource_version_of(*object);
  ++watch_events_;
  if (type != "BOOKMARK") {
    const std::string key = key_of(*object);
    if (key.empty() || (type != "ADDED" && type != "MODIFIED" && type != "DELETED")) {
      reason = "unexpected watch event: " + std::string(raw.substr(0, 200));
      return EventResult::Failed;
    }
    const ObjectMap& current = working ? *working : *objects_;
    if (type != "DELETED" || current.count(key) > 0) {
      if (!working) working.emplace(*objects_);
      if (type == "DELETED") {
        working->erase(key);
      } else {
        auto doc = std::make_shared<rapidjson::Document>();
        doc->CopyFrom(*object, doc->GetAllocator());
        working->insert_or_assign(key, std::move(doc));
      }
    }
  }
  if (!version.empty()) resource_version_ = std::move(version);
  return EventResult::Ok;
}

void Informer::State::publish(ObjectSnapshot next) {
  if (stop_requested_) return;
  objects_ = next;
  snapshot.store(next);
  if (on_change_) on_change_(std::move(next));
}

void Informer::State::note_failure(const char* what, const std::string& reason) {
  ++failures_;
  const auto now = Clock::now();
  if (failures_ > 1 && now - last_failure_log_ < kLogInterval) return;
  last_failure_log_ = now;
  YH_LOG(Warning) << "informer " << options_.name << ": " << what << " failed: " << reason
                  << " (failure " << failures_ << " in a row, retrying in " << backoff_.count()
                  << " ms)";
}

// The backoff resets once a watch is established rather than after any list: the hub's cache
// answers lists even offline, so a watch that always fails (say, RBAC allowing list but not
// watch) must not turn into a list+watch every `backoff_initial`.
void Informer::State::note_watch_established() {
  if (failures_ > 0) {
    YH_LOG(Info) << "informer " << options_.name << ": watching again after " << failures_
                 << " failures";
  }
  failures_ = 0;
  backoff_ = options_.backoff_initial;
}

void Informer::State::note_listed(std::size_t count) {
  const auto now = Clock::now();
  if (last_list_log_ != Clock::time_point{} && now - last_list_log_ < kLogInterval) {
    YH_LOG(Debug) << "informer " << options_.name << ": listed " << count << " objects";
    return;
  }
  last_list_log_ = now;
  YH_LOG(Info) << "informer " << options_.name << ": listed " << count
               << " objects at resourceVersion " << resource_version_;
}

Informer::Informer(asio::any_io_executor executor, InformerOptions options, OnChange on_change)
    : state_(
          std::make_shared<State>(std::move(executor), std::move(options), std::move(on_change))) {}

Informer::~Informer() {
  try {
    stop();
  } catch (const std::exception& e) {  // stop() posts to the executor, which may allocate
    YH_LOG(Error) << "informer: stopping on destruction: " << e.what();
  }
}

void Informer::start() {
  if (state_->running.exchange(true)) return;
  asio::co_spawn(state_->executor(), State::run(state_),
                 [state = state_](const std::exception_ptr& error) { state->exited(error); });
}

void Informer::stop() {
  asio::dispatch(state_->executor(), [state = state_] { state->request_stop(); });
}

bool Informer::stopped() const { return !state_->running.load(); }

bool Informer::synced() const { return state_->synced.load(); }

bool Informer::missing() const { return state_->missing.load(); }

ObjectSnapshot Informer::snapshot() const { return state_->snapshot.load(); }

}  // namespace yurthub::net
