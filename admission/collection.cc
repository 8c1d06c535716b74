// The list+watch of one resource; see collection.h. Lifetime as net::Informer's: the loop's
// coroutine owns the State through a shared_ptr, so ~Collection only asks it to stop.
#include "admission/collection.h"

#include <random>
#include <vector>

#include <boost/beast/http.hpp>

#include "base/clock.h"
#include "base/json_frames.h"
#include "base/json_member.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/url.h"
#include "net/http_io.h"
#include "net/spawn.h"
#include "net/timer.h"

namespace yurthub::admission {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr auto kListTimeout = std::chrono::seconds(60);
constexpr auto kWatchDeadlineMargin = std::chrono::seconds(30);
constexpr std::size_t kReadPieceBytes = 16 * 1024;
constexpr auto kShortWatch = std::chrono::seconds(1);

std::string resource_version_of(const rapidjson::Value& object) {
  const rapidjson::Value* meta = base::find_member(object, "metadata");
  return meta ? base::string_member(*meta, "resourceVersion") : std::string();
}

std::string key_of(const rapidjson::Value& object) {
  const rapidjson::Value* meta = base::find_member(object, "metadata");
  if (!meta) return {};
  const std::string name = base::string_member(*meta, "name");
  const std::string ns = base::string_member(*meta, "namespace");
  return ns.empty() || name.empty() ? name : ns + "/" + name;
}

std::shared_ptr<const rapidjson::Document> copy_of(const rapidjson::Value& object) {
  auto doc = std::make_shared<rapidjson::Document>();
  doc->CopyFrom(object, doc->GetAllocator());
  return doc;
}

}  // namespace

class Collection::State {
 public:
  State(asio::any_io_executor executor, std::shared_ptr<const ApiClient> client,
        CollectionOptions options, OnChange on_change)
      : executor_(std::move(executor)),
        client_(std::move(client)),
        options_(std::move(options)),
        on_change_(std::move(on_change)),
        backoff_timer_(executor_),
        backoff_(options_.backoff_initial),
        rng_(std::random_device{}()) {}

  static asio::awaitable<void> run(std::shared_ptr<State> self) { co_await self->loop(); }
  void request_stop() {
    stop_ = true;
    on_change_ = nullptr;
    backoff_timer_.cancel();
    if (connection_) beast::get_lowest_layer(connection_->stream).close();
  }

  const asio::any_io_executor& executor() const { return executor_; }
  bool synced = false;
  net::ObjectMap objects;

 private:
  enum class WatchEnd { Rewatch, Relist, Failed };

  asio::awaitable<void> loop();
  asio::awaitable<Status> list();
  asio::awaitable<WatchEnd> watch(std::string& reason);
  asio::awaitable<WatchEnd> read_events(http::response_parser<http::buffer_body>& parser,
                                        std::string& reason);
  WatchEnd apply_event(std::string_view raw, std::string& reason);
  asio::awaitable<void> back_off(const std::string& what);
  std::string target(bool watch, long timeout_seconds) const;
  void notify(CollectionChange change, const std::string& key) {
    if (on_change_) on_change_(change, key);
  }

  asio::any_io_executor executor_;
  std::shared_ptr<const ApiClient> client_;
  CollectionOptions options_;
  OnChange on_change_;
  net::Timer backoff_timer_;
  std::unique_ptr<ApiConnection> connection_;  // of the watch in flight
  bool stop_ = false;
  std::string resource_version_;
  std::size_t watch_events_ = 0;  // of the current watch, bookmarks included
  std::chrono::milliseconds backoff_;
  std::minstd_rand rng_;
};

asio::awaitable<void> Collection::State::loop() {
  while (!stop_) {
    Status listed = co_await list();
    if (stop_) co_return;
    if (!listed) {
      co_await back_off("list failed: " + listed.error().message);
      continue;
    }
    for (;;) {
      std::string reason;
      const auto started = base::Clock::now();
      watch_events_ = 0;
      WatchEnd end = co_await watch(reason);
      if (stop_) co_return;
      // As client-go: a watch that ends within a second without an event is a failure, so a
      // server that ends every watch at once is not asked again and again.
      if (end == WatchEnd::Rewatch && watch_events_ == 0 &&
          base::Clock::now() - started < kShortWatch) {
        end = WatchEnd::Failed;
        reason = "the watch ended within a second without events";
      }
      if (end == WatchEnd::Rewatch) continue;
      if (end == WatchEnd::Relist) {
        YH_LOG(Info) << options_.name << ": watch expired (" << reason << "), re-listing";
      } else {
        co_await back_off("watch failed: " + reason);
      }
      break;
    }
  }
}

asio::awaitable<void> Collection::State::back_off(const std::string& what) {
  YH_LOG(Warning) << options_.name << ": " << what << " (retrying in " << backoff_.count()
                  << " ms)";
  backoff_timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  co_await backoff_timer_.async_wait(net::kNoThrow);
}

std::string Collection::State::target(bool watch, long timeout_seconds) const {
  std::string t = options_.path;
  if (!options_.label_selector.empty()) {
    base::append_query_param(t, "labelSelector", options_.label_selector);
  }
  if (watch) {
    base::append_query_param(t, "allowWatchBookmarks", "true");
    base::append_query_param(t, "resourceVersion", resource_version_);
    base::append_query_param(t, "timeoutSeconds", std::to_string(timeout_seconds));
    base::append_query_param(t, "watch", "true");
  }
  return t;
}

asio::awaitable<Status> Collection::State::list() {
  const std::string t = target(false, 0);
  auto answer = co_await client_->call(executor_, http::verb::get, t, "", "", kListTimeout);
  if (!answer) co_return answer.error();
  if (answer->status != 200) {
    co_return make_error("GET " + t + ": HTTP " + std::to_string(answer->status) + ": " +
                         answer->body.substr(0, 300));
  }
  rapidjson::Document list;
  if (Status parsed = base::parse_json(answer->body, list); !parsed) co_return parsed;
  const rapidjson::Value* items = base::find_member(list, "items");
  std::string version = resource_version_of(list);
  if (!items || !(items->IsArray() || items->IsNull()) || version.empty()) {
    co_return make_error("GET " + t + ": not a list with items and a resourceVersion");
  }
  net::ObjectMap next;
  if (items->IsArray()) {
    for (const auto& item : items->GetArray()) {
      if (std::string key = key_of(item); !key.empty()) next.emplace(std::move(key), copy_of(item));
    }
  }
  YH_LOG(Info) << options_.name << ": listed " << next.size() << " at resourceVersion " << version;
  objects = std::move(next);
  resource_version_ = std::move(version);
  synced = true;
  notify(CollectionChange::Listed, "");
  co_return Status{};
}

asio::awaitable<Collection::State::WatchEnd> Collection::State::watch(std::string& reason) {
  const long min_seconds = std::max<long>(1, options_.watch_timeout_min.count());
  const long timeout = std::uniform_int_distribution<long>(min_seconds, 2 * min_seconds - 1)(rng_);
  const std::string t = target(true, timeout);
  auto connection = co_await client_->connect(executor_, kConnectTimeout);
  if (stop_) co_return WatchEnd::Failed;
  if (!connection) {
    reason = connection.error().message;
    co_return WatchEnd::Failed;
  }
  connection_ = std::move(*connection);
  beast::get_lowest_layer(connection_->stream)
      .expires_after(std::chrono::seconds(timeout) + kWatchDeadlineMargin);
  Status sent = co_await client_->send(*connection_, http::verb::get, t, "", "");
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  WatchEnd end = WatchEnd::Failed;
  if (!sent) {
    reason = sent.error().message;
  } else if (auto [ec, n] = co_await http::async_read_header(
                 connection_->stream, connection_->buffer, parser, net::kNoThrow);
             ec) {
    reason = "GET " + t + ": reading the answer: " + ec.message();
  } else if (parser.get().result_int() != 200) {
    reason = "GET " + t + ": HTTP " + std::to_string(parser.get().result_int());
    end = parser.get().result_int() == 410 ? WatchEnd::Relist : WatchEnd::Failed;
  } else {
    backoff_ = options_.backoff_initial;  // a watch is established: the apiserver is well
    end = co_await read_events(parser, reason);
  }
  connection_.reset();
  co_return end;
}

asio::awaitable<Collection::State::WatchEnd> Collection::State::read_events(
    http::response_parser<http::buffer_body>& parser, std::string& reason) {
  base::WatchFramer framer;
  std::vector<char> piece(kReadPieceBytes);
  WatchEnd end = WatchEnd::Rewatch;
  while (!parser.is_done() && !stop_) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    auto [ec, n] = co_await http::async_read_some(connection_->stream, connection_->buffer, parser,
                                                  net::kNoThrow);
    if (stop_) co_return WatchEnd::Failed;
    if (ec == http::error::need_buffer) ec = {};
    const std::size_t got = piece.size() - parser.get().body().size;
    Status fed = framer.feed({piece.data(), got}, [&](std::string_view raw) {
      if (end == WatchEnd::Rewatch) end = apply_event(raw, reason);
    });
    if (end != WatchEnd::Rewatch) co_return end;
    if (!fed) {
      reason = "malformed watch stream: " + fed.error().message;
      co_return WatchEnd::Failed;
    }
    if (ec) {
      reason = "watch stream broke: " + ec.message();
      co_return WatchEnd::Failed;
    }
  }
  co_return WatchEnd::Rewatch;
}

Collection::State::WatchEnd Collection::State::apply_event(std::string_view raw,
                                                           std::string& reason) {
  rapidjson::Document event;
  const rapidjson::Value* object =
      base::parse_json(raw, event) ? base::find_member(event, "object") : nullptr;
  if (!object || !object->IsObject()) {
    reason = "watch event without an object: " + std::string(raw.substr(0, 200));
    return WatchEnd::Failed;
  }
  const std::string type = base::string_member(event, "type");
  if (type == "ERROR") {
    const rapidjson::Value* code = base::find_member(*object, "code");
    reason = "ERROR event: " + base::string_member(*object, "message");
    return code && code->IsInt() && code->GetInt() == 410 ? WatchEnd::Relist : WatchEnd::Failed;
  }
  ++watch_events_;
  if (std::string version = resource_version_of(*object); !version.empty()) {
    resource_version_ = std::move(version);
  }
  if (type == "BOOKMARK") return WatchEnd::Rewatch;
  const std::string key = key_of(*object);
  if (key.empty() || (type != "ADDED" && type != "MODIFIED" && type != "DELETED")) {
    reason = "unexpected watch event: " + std::string(raw.substr(0, 200));
    return WatchEnd::Failed;
  }
  if (type == "DELETED") {
    objects.erase(key);
    notify(CollectionChange::Deleted, key);
  } else {
    objects.insert_or_assign(key, copy_of(*object));
    notify(CollectionChange::Updated, key);
  }
  return WatchEnd::Rewatch;
}

Collection::Collection(asio::any_io_executor executor, std::shared_ptr<const ApiClient> client,
                       CollectionOptions options, OnChange on_change)
    : state_(std::make_shared<State>(std::move(executor), std::move(client), std::move(options),
                                     std::move(on_change))) {}

Collection::~Collection() { stop(); }

void Collection::start() {
  net::spawn_detached(state_->executor(), State::run(state_), "pool-admission collection");
}

void Collection::stop() { state_->request_stop(); }

bool Collection::synced() const { return state_->synced; }

const net::ObjectMap& Collection::objects() const { return state_->objects; }

}  // namespace yurthub::admission
