// Reflector: the list+watch loop; see reflector.h.
//
// Lifetime: everything the loop touches lives in Reflector::State, which the loop's coroutine
// owns through a shared_ptr of its own. ~Reflector only requests a stop; the coroutine, woken by
// the cancelled socket or timer, sees the flag and exits, so it never reaches a destroyed
// Reflector. Threading: State's plain members are touched only on the executor (stop()
// dispatches there); the flags other threads read are atomics.
#include "net/reflector.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/clock.h"
#include "base/json_frames.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/url.h"
#include "net/http_io.h"
#include "net/source_stream.h"
#include "net/timed_socket.h"
#include "net/timer.h"

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
constexpr std::size_t kReadPieceBytes = 16 * 1024;
// client-go treats a watch closed within a second with no event as an error ("very short
// watch"), so a server that ends every watch at once is not hammered.
constexpr auto kShortWatch = std::chrono::seconds(1);
// Repeated failures (e.g. for as long as the node is offline) are logged at most this often.
constexpr auto kLogInterval = std::chrono::seconds(60);

// The `message` of a Kubernetes Status body, else the start of the body.
std::string status_message(std::string_view body) {
  rapidjson::Document doc;
  if (base::parse_json(body, doc) && doc.IsObject()) {
    auto it = doc.FindMember("message");
    if (it != doc.MemberEnd() && it->value.IsString() && it->value.GetStringLength() > 0)
      return it->value.GetString();
  }
  return std::string(body.substr(0, 200));
}

}  // namespace

class Reflector::State {
 public:
  State(asio::any_io_executor executor, ReflectorOptions options,
        std::shared_ptr<ReflectorSink> sink)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        sink_(std::move(sink)),
        backoff_timer_(executor_),
        backoff_(options_.backoff_initial),
        rng_(std::random_device{}()) {}

  static asio::awaitable<void> run(std::shared_ptr<State> self) { co_await self->loop(); }
  // Runs when the loop's coroutine has ended, however it ended.
  void exited(const std::exception_ptr& error);
  // REQUIRES: on the executor.
  void request_stop();
  // REQUIRES: on the executor.
  void request_reconnect();
  const asio::any_io_executor& executor() const { return executor_; }

  std::atomic<bool> running{false};
  std::atomic<bool> synced{false};
  std::atomic<bool> missing{false};
  std::atomic<bool> tried{false};

 private:
  // Rewatch: ended cleanly; Broken: the connection failed or broke (resumed from the last
  // resourceVersion); Relist: 410; Failed: not what a watch sends (listed anew).
  enum class WatchEnd { Rewatch, Broken, Relist, Failed };

  asio::awaitable<void> loop();
  asio::awaitable<Status> list();
  asio::awaitable<WatchEnd> watch(std::string& reason);
  asio::awaitable<WatchEnd> read_events(http::response_parser<http::buffer_body>& parser,
                                        beast::flat_buffer& buffer, std::string& reason);
  asio::awaitable<Status> send(const std::string& target, Clock::duration deadline);
  // Waits the current backoff (at most `cap`), then doubles it up to `cap`.
  asio::awaitable<void> back_off(std::chrono::milliseconds cap);
  std::string target(std::optional<long> watch_timeout_seconds) const;
  void note_failure(const char* what, const std::string& reason);
  void note_watch_established();

  asio::any_io_executor executor_;
  ReflectorOptions options_;
  std::shared_ptr<ReflectorSink> sink_;
  net::Timer backoff_timer_;
  std::optional<SourceStream> stream_;  // the connection of the request in flight
  bool stop_requested_ = false;
  bool reconnecting_ = false;     // the connection was dropped for a new source: no backoff
  std::string resource_version_;  // the last one seen (list, event or bookmark)
  std::size_t watch_events_ = 0;  // events of the current watch
  std::chrono::milliseconds backoff_;
  std::minstd_rand rng_;
  int failures_ = 0;  // consecutive, since a watch was last established
  Clock::time_point last_failure_log_{};
};

void Reflector::State::exited(const std::exception_ptr& error) {
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      YH_LOG(Error) << "reflector " << options_.name << ": stopped by an exception: " << e.what();
    } catch (...) {
      YH_LOG(Error) << "reflector " << options_.name << ": stopped by an unknown exception";
    }
  }
  stop_requested_ = true;
  stream_.reset();
  sink_->stopped();
  running = false;
}

void Reflector::State::request_stop() {
  stop_requested_ = true;
  backoff_timer_.cancel();
  if (stream_) stream_->close();  // a pending connect/read/write completes with an error now
}

void Reflector::State::request_reconnect() {
  if (stop_requested_) return;
  reconnecting_ = true;
  backoff_ = options_.backoff_initial;
  backoff_timer_.cancel();
  if (stream_) stream_->close();
}

asio::awaitable<void> Reflector::State::loop() {
  while (!stop_requested_) {
    auto listed = co_await list();
    if (stop_requested_) co_return;
    tried = true;
    if (!listed && missing.load()) {
      // Backs off as for a failure (the 404 may have come from the hub's cache in a moment
      // offline), but quietly and at most every missing_retry.
      co_await back_off(options_.missing_retry);
      continue;
    }
    if (!listed && std::exchange(reconnecting_, false)) continue;
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
      if (std::exchange(reconnecting_, false) && end != WatchEnd::Relist) continue;
      const bool quick = watch_events_ == 0 && Clock::now() - started < kShortWatch;
      if (end == WatchEnd::Rewatch && !quick) continue;
      if (end == WatchEnd::Relist && !quick) {
        YH_LOG(Info) << "reflector " << options_.name << ": watch expired (" << reason
                     << "), re-listing";
        break;
      }
      if (end == WatchEnd::Rewatch || end == WatchEnd::Relist) {
        reason = "watch ended within a second without events" +
                 (end == WatchEnd::Relist ? " (expired: " + reason + ")" : std::string());
      }
      note_failure("watch", reason);
      co_await back_off(options_.backoff_max);
      // A watch that broke resumes from where it was: its events are the apiserver's, so none is
      // missed (or the apiserver answers 410).
      if (end == WatchEnd::Broken) continue;
      break;
    }
  }
}

asio::awaitable<void> Reflector::State::back_off(std::chrono::milliseconds cap) {
  backoff_timer_.expires_after(std::min(backoff_, cap));
  backoff_ = std::min(backoff_ * 2, cap);
  co_await backoff_timer_.async_wait(kNoThrow);
}

std::string Reflector::State::target(std::optional<long> watch_timeout_seconds) const {
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
asio::awaitable<Status> Reflector::State::send(const std::string& target,
                                               Clock::duration deadline) {
  SourceAddress source{options_.proxy_host, options_.proxy_port, nullptr};
  if (options_.source) source = options_.source();
  const std::string where = source.authority();
  stream_.emplace(executor_, source);
  stream_->socket().expires_after(kConnectTimeout);
  auto connected = co_await stream_->connect();
  if (stop_requested_) co_return Status{};
  if (!connected) co_return connected;

  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, where);
  req.set(http::field::user_agent, options_.user_agent);
  req.set(http::field::accept, "application/json");
  req.keep_alive(false);
  stream_->socket().expires_after(deadline);
  auto [wec, wn] = co_await http::async_write(*stream_, req, kNoThrow);
  if (wec && !stop_requested_) co_return make_error("sending GET " + target + ": " + wec.message());
  co_return Status{};
}

asio::awaitable<Status> Reflector::State::list() {
  const std::string t = target(std::nullopt);
  auto sent = co_await send(t, kListTimeout);
  if (!sent || stop_requested_) co_return sent;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(options_.max_list_bytes);
  auto [ec, n] = co_await http::async_read(*stream_, buffer, parser, kNoThrow);
  if (stop_requested_) co_return Status{};
  stream_.reset();
  if (ec == http::error::body_limit) {
    co_return make_error("GET " + t + ": response larger than " +
                         std::to_string(options_.max_list_bytes >> 20) + " MiB");
  }
  if (ec) co_return make_error("GET " + t + ": reading the response: " + ec.message());
  const unsigned code = parser.get().result_int();
  if (code == 404 && options_.missing_is_empty) {
    if (!missing.exchange(true)) {
      YH_LOG(Info) << "reflector " << options_.name << ": GET " << t
                   << " is not found; taken as empty until it is found";
    }
    synced = true;
    sink_->missing();
    co_return make_error("not found");
  }
  missing = false;
  if (code != 200) {
    co_return make_error("GET " + t + ": HTTP " + std::to_string(code) + ": " +
                         status_message(parser.get().body()));
  }
  std::string version;
  Status applied = sink_->listed(parser.get().body(), &version);
  if (!applied) co_return applied;
  if (version.empty()) co_return make_error("list has no metadata.resourceVersion");
  resource_version_ = std::move(version);
  synced = true;
  sink_->events_done();  // what the list changed is told now, with synced() true
  co_return Status{};
}

asio::awaitable<Reflector::State::WatchEnd> Reflector::State::watch(std::string& reason) {
  const long min_seconds = std::max<long>(1, options_.watch_timeout_min.count());
  const long timeout = std::uniform_int_distribution<long>(min_seconds, 2 * min_seconds - 1)(rng_);
  const std::string t = target(timeout);
  watch_events_ = 0;
  auto sent = co_await send(t, std::chrono::seconds(timeout) + kWatchDeadlineMargin);
  if (stop_requested_) co_return WatchEnd::Failed;
  if (!sent) {
    reason = sent.error().message;
    co_return WatchEnd::Broken;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  auto [ec, n] = co_await http::async_read_header(*stream_, buffer, parser, kNoThrow);
  if (stop_requested_) co_return WatchEnd::Failed;
  if (ec) {
    reason = "GET " + t + ": reading the response: " + ec.message();
    co_return WatchEnd::Broken;
  }
  const unsigned code = parser.get().result_int();
  if (code != 200) {
    stream_.reset();
    reason = "GET " + t + ": HTTP " + std::to_string(code);
    co_return code == 410 ? WatchEnd::Relist : WatchEnd::Failed;
  }
  note_watch_established();
  sink_->watching();
  const WatchEnd end = co_await read_events(parser, buffer, reason);
  if (!stop_requested_) stream_.reset();
  co_return end;
}

// Reads the watch body piece by piece, giving each event to the sink as soon as it is complete.
asio::awaitable<Reflector::State::WatchEnd> Reflector::State::read_events(
    http::response_parser<http::buffer_body>& parser, beast::flat_buffer& buffer,
    std::string& reason) {
  base::WatchFramer framer;
  std::vector<char> piece(kReadPieceBytes);
  EventVerdict verdict = EventVerdict::Ok;
  while (!parser.is_done()) {
    auto& body = parser.get().body();
    body.data = piece.data();
    body.size = piece.size();
    auto [ec, n] = co_await http::async_read_some(*stream_, buffer, parser, kNoThrow);
    if (stop_requested_) co_return WatchEnd::Failed;
    if (ec == http::error::need_buffer) ec = {};
    const std::size_t got = piece.size() - parser.get().body().size;
    Status fed = framer.feed({piece.data(), got}, [&](std::string_view raw) {
      if (verdict != EventVerdict::Ok || stop_requested_) return;
      std::string version;
      verdict = sink_->event(raw, &version, &reason);
      if (verdict != EventVerdict::Ok) return;
      ++watch_events_;
      if (!version.empty()) resource_version_ = std::move(version);
    });
    if (stop_requested_) co_return WatchEnd::Failed;
    sink_->events_done();
    if (verdict != EventVerdict::Ok) {
      co_return verdict == EventVerdict::Relist ? WatchEnd::Relist : WatchEnd::Failed;
    }
    if (!fed) {
      reason = "malformed watch stream: " + fed.error().message;
      co_return WatchEnd::Failed;
    }
    if (ec) {
      reason = ec == beast::error::timeout ? "watch outlived its deadline"
                                           : "watch stream broke: " + ec.message();
      co_return WatchEnd::Broken;
    }
  }
  co_return WatchEnd::Rewatch;
}

void Reflector::State::note_failure(const char* what, const std::string& reason) {
  ++failures_;
  const auto now = Clock::now();
  if (failures_ > 1 && now - last_failure_log_ < kLogInterval) return;
  last_failure_log_ = now;
  YH_LOG(Warning) << "reflector " << options_.name << ": " << what << " failed: " << reason
                  << " (failure " << failures_ << " in a row, retrying in " << backoff_.count()
                  << " ms)";
}

// The backoff resets once a watch is established rather than after any list: the hub's cache
// answers lists even offline, so a watch that always fails (say, RBAC allowing list but not
// watch) must not turn into a list+watch every `backoff_initial`.
void Reflector::State::note_watch_established() {
  if (failures_ > 0) {
    YH_LOG(Info) << "reflector " << options_.name << ": watching again after " << failures_
                 << " failures";
  }
  failures_ = 0;
  backoff_ = options_.backoff_initial;
}

Reflector::Reflector(asio::any_io_executor executor, ReflectorOptions options,
                     std::shared_ptr<ReflectorSink> sink)
    : state_(std::make_shared<State>(std::move(executor), std::move(options), std::move(sink))) {}

Reflector::~Reflector() {
  try {
    stop();
  } catch (const std::exception& e) {  // stop() posts to the executor, which may allocate
    YH_LOG(Error) << "reflector: stopping on destruction: " << e.what();
  }
}

void Reflector::start() {
  if (state_->running.exchange(true)) return;
  asio::co_spawn(state_->executor(), State::run(state_),
                 [state = state_](const std::exception_ptr& error) { state->exited(error); });
}

void Reflector::reconnect() {
  asio::dispatch(state_->executor(), [state = state_] { state->request_reconnect(); });
}

void Reflector::stop() {
  asio::dispatch(state_->executor(), [state = state_] { state->request_stop(); });
}

bool Reflector::stopped() const { return !state_->running.load(); }
bool Reflector::synced() const { return state_->synced.load(); }
bool Reflector::missing() const { return state_->missing.load(); }
bool Reflector::tried() const { return state_->tried.load(); }

}  // namespace yurthub::net
