// Watch streaming; see watch.h.
#include "test/fake_apiserver/watch.h"

#include <charconv>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/protobuf_watch.h"

namespace yurthub::fake {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

std::optional<std::uint64_t> parse_uint(const std::string& s) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Flags shared by the watch's writer loop and its hang-up detector.
struct WatchState {
  asio::steady_timer wake;
  bool client_gone = false;
  bool reader_done = false;
};

// Watch clients send nothing after the request; a completed read means the client hung up (or
// broke protocol), which ends the watch now rather than at the next event.
asio::awaitable<void> detect_hangup(TlsStream& stream, WatchState& state) {
  char byte = 0;
  auto [ec, n] = co_await stream.async_read_some(asio::buffer(&byte, 1), kNoThrow);
  (void)n;
  if (ec != asio::error::operation_aborted) state.client_gone = true;
  state.reader_done = true;
  state.wake.cancel();
}

struct PumpArgs {
  Watcher& watcher;
  bool protobuf;  // the client asked for protobuf only (protobuf_watch.h)
  const WatchPlan& plan;
  const WatchConfig& config;
  std::string_view kind;
  std::string_view api_version;
  const Store& store;
};

enum class WatchEnd { Timeout, Shutdown, ClientGone, Overflow, WriteFailed };

const char* end_name(WatchEnd e) {
  switch (e) {
    case WatchEnd::Timeout:
      return "timeoutSeconds reached";
    case WatchEnd::Shutdown:
      return "server shutdown";
    case WatchEnd::ClientGone:
      return "client hung up";
    case WatchEnd::Overflow:
      return "client too slow (queue overflow)";
    case WatchEnd::WriteFailed:
      return "write failed";
  }
  return "";
}

// Sends events until the watch ends; Timeout and Shutdown end with a terminating chunk.
asio::awaitable<WatchEnd> pump(TlsStream& stream, WatchState& state, PumpArgs a) {
  auto now = Clock::now();
  auto end = a.plan.timeout ? now + *a.plan.timeout : Clock::time_point::max();
  auto next_bookmark =
      a.plan.bookmarks ? now + a.config.bookmark_interval : Clock::time_point::max();
  for (;;) {
    while (auto item = a.watcher.pop()) {
      std::string line = item->initial_events_end
                             ? initial_events_end_event(a.kind, a.api_version, item->rv)
                             : watch_event(*item, a.kind, a.api_version);
      if (a.protobuf) line = protobuf_watch_frame(a.kind, a.api_version, line);
      ErrorCode ec = co_await write_chunk(stream, line);
      if (ec) co_return a.watcher.overflowed() ? WatchEnd::Overflow : WatchEnd::WriteFailed;
    }
    if (state.client_gone) co_return WatchEnd::ClientGone;
    if (a.watcher.overflowed()) co_return WatchEnd::Overflow;
    now = Clock::now();
    if (a.watcher.closed() || now >= end) {
      ErrorCode ec = co_await write_last_chunk(stream);
      if (ec) co_return WatchEnd::WriteFailed;
      co_return a.watcher.closed() ? WatchEnd::Shutdown : WatchEnd::Timeout;
    }
    if (now >= next_bookmark) {
      // The queue is empty, so every event up to the current resourceVersion has been sent.
      std::string line = bookmark_event(a.kind, a.api_version, a.store.current_rv());
      if (a.protobuf) line = protobuf_watch_frame(a.kind, a.api_version, line);
      ErrorCode ec = co_await write_chunk(stream, line);
      if (ec) co_return WatchEnd::WriteFailed;
      next_bookmark = now + a.config.bookmark_interval;
      continue;
    }
    state.wake.expires_at(std::min(end, next_bookmark));
    auto [ec] = co_await state.wake.async_wait(kNoThrow);
    (void)ec;
  }
}

}  // namespace

std::variant<WatchPlan, Reply> plan_watch(const ApiRequest& req, const WatchConfig& config) {
  WatchPlan plan;
  if (auto refused = parse_selectors(req, plan.filter.labels, plan.filter.fields)) return *refused;
  auto options = decide_watch_options(req.query, config.watch_list);
  if (auto* refused = std::get_if<Reply>(&options)) return std::move(*refused);
  plan.send_initial_events = std::get<WatchOptions>(options).send_initial_events;
  plan.filter.resource = req.resource->key();
  plan.filter.ns = req.path.ns;
  std::string rv = req.query.value("resourceVersion");
  if (!rv.empty() && rv != "0") {
    plan.from_rv = parse_uint(rv);
    if (!plan.from_rv) return bad_request("invalid resource version: " + rv);
  }
  plan.bookmarks = req.query.flag("allowWatchBookmarks");
  std::string timeout = req.query.value("timeoutSeconds");
  if (!timeout.empty()) {
    auto secs = parse_uint(timeout);
    if (!secs) return bad_request("invalid timeoutSeconds: " + timeout);
    if (*secs > 0) plan.timeout = std::chrono::seconds(*secs);
  }
  return plan;
}

std::string bookmark_event(std::string_view kind, std::string_view api_version, std::uint64_t rv) {
  std::string bare = "{\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) +
                     "\",\"creationTimestamp\":null}}";
  return "{\"type\":\"BOOKMARK\",\"object\":" + with_type_meta(kind, api_version, bare) + "}\n";
}

std::string initial_events_end_event(std::string_view kind, std::string_view api_version,
                                     std::uint64_t rv) {
  std::string bare = "{\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) +
                     "\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}";
  return "{\"type\":\"BOOKMARK\",\"object\":" + with_type_meta(kind, api_version, bare) + "}\n";
}

std::string watch_event(const WatchItem& item, std::string_view kind,
                        std::string_view api_version) {
  std::string line = "{\"type\":\"";
  line += event_type_name(item.type);
  line += "\",\"object\":";
  line += with_type_meta(kind, api_version, *item.object);
  line += "}\n";
  return line;
}

asio::awaitable<bool> serve_watch(TlsStream& stream, Store& store, const ApiRequest& req,
                                  WatchPlan plan, const WatchConfig& config, bool keep_alive) {
  const ResourceInfo& r = *req.resource;
  std::string api_version = r.api_version(req.path.version);
  // A streaming list starts from the current objects whatever its resourceVersion (the watch
  // cache sends its current state once it has reached the version); sendInitialEvents=false
  // from "" or "0" starts now, with no initial events.
  std::optional<std::uint64_t> from_rv = plan.from_rv;
  if (plan.send_initial_events == true) from_rv.reset();
  if (plan.send_initial_events == false && !from_rv) from_rv = store.current_rv();
  WatchStart start = store.watch(plan.filter, from_rv, config.max_queue);
  if (start.watcher && plan.send_initial_events == true && plan.bookmarks) {
    start.watcher->push_initial(WatchItem{EventType::Added, nullptr, store.current_rv(), true});
  }
  const bool protobuf = wants_protobuf_watch(req.accept);
  ErrorCode ec = co_await write_chunked_header(
      stream, 200,
      protobuf ? "application/vnd.kubernetes.protobuf;stream=watch" : "application/json",
      keep_alive);
  if (ec || start.expired) {
    if (start.watcher) store.unwatch(start.watcher);
    if (ec) co_return false;
    // The apiserver answers 200 and one ERROR event carrying a 410 Status (watch-expired).
    std::string line =
        "{\"type\":\"ERROR\",\"object\":" + expired_status(*plan.from_rv, start.oldest) + "}\n";
    if (protobuf) line = protobuf_watch_frame("Status", "v1", line);
    ec = co_await write_chunk(stream, line);
    if (!ec) ec = co_await write_last_chunk(stream);
    co_return !ec && keep_alive;
  }
  std::shared_ptr<Watcher> watcher = start.watcher;
  auto executor = co_await asio::this_coro::executor;
  WatchState state{asio::steady_timer(executor)};
  auto& lowest = boost::beast::get_lowest_layer(stream);
  watcher->set_wakeup([&state, &lowest, w = watcher.get()] {
    state.wake.cancel();
    // A client that stopped reading blocks our write; drop it rather than wait out the timeout.
    if (w->overflowed()) lowest.cancel();
  });
  lowest.expires_never();  // the hang-up read must not time out; writes arm their own timeout
  asio::co_spawn(executor, detect_hangup(stream, state), asio::detached);
  auto pumping =
      pump(stream, state, PumpArgs{*watcher, protobuf, plan, config, r.kind, api_version, store});
  WatchEnd end = co_await std::move(pumping);
  bool clean = end == WatchEnd::Timeout || end == WatchEnd::Shutdown;
  YH_LOG(Info) << "watch " << req.resource->qualified() << " ended: " << end_name(end)
               << " user=" << (req.user.user.empty() ? "-" : req.user.user);
  watcher->set_wakeup(nullptr);
  store.unwatch(watcher);
  if (!state.reader_done) lowest.socket().cancel(ec);
  while (!state.reader_done) {
    state.wake.expires_at(Clock::time_point::max());
    auto [wait_ec] = co_await state.wake.async_wait(kNoThrow);
    (void)wait_ec;
  }
  co_return clean && !state.client_gone && keep_alive;
}

}  // namespace yurthub::fake
