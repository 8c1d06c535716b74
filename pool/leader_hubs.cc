// A follower's leader hubs, probed; see leader_hubs.h.
#include "pool/leader_hubs.h"

#include <algorithm>
#include <cstdint>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/log.h"
#include "net/http_io.h"
#include "net/timer.h"

namespace yurthub::pool {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::size_t kMaxHealthBody = 4096;

}  // namespace

std::vector<LeaderHub> leaders_to_follow(const std::vector<LeaderHub>& leaders,
                                         bool leader_election, const std::string& node_name) {
  if (!leader_election) return {};
  for (const LeaderHub& leader : leaders) {
    if (leader.node == node_name) return {};  // a leader feeds from the cloud itself
  }
  return leaders;
}

struct LeaderHubs::State {
  struct Leader {
    LeaderHub hub;
    int successes = 0;
    bool healthy = false;
    bool known = false;
    std::string last_failure;
  };

  State(asio::any_io_executor e, LeaderHubsSettings s, base::MetricsRegistry& metrics,
        std::function<void()> change)
      : executor(std::move(e)),
        settings(std::move(s)),
        on_change(std::move(change)),
        timer(executor),
        healthy_gauge(metrics.gauge("node_yurthub_pool_leader_healthy",
                                    "Whether a leader hub of this follower's pool answers its "
                                    "health probe (1) or not (0), by leader node/ip.",
                                    {"leader"})) {}

  static asio::awaitable<void> run(std::shared_ptr<State> self, std::uint64_t generation);
  asio::awaitable<bool> probe(const LeaderHub& hub, std::string* why);
  void record(Leader& leader, bool ok, const std::string& why);
  void choose();

  asio::any_io_executor executor;
  LeaderHubsSettings settings;
  std::function<void()> on_change;
  net::Timer timer;
  base::GaugeFamily& healthy_gauge;
  std::vector<Leader> leaders;
  std::optional<std::size_t> current;  // index into leaders
  std::uint64_t generation = 0;        // bumped by set_leaders: an older loop exits
  bool stopped = false;
};

asio::awaitable<void> LeaderHubs::State::run(std::shared_ptr<State> self,
                                             std::uint64_t generation) {
  while (!self->stopped && generation == self->generation) {
    for (std::size_t i = 0; i < self->leaders.size(); ++i) {
      const LeaderHub hub = self->leaders[i].hub;
      std::string why;
      const bool ok = co_await self->probe(hub, &why);
      if (self->stopped || generation != self->generation) co_return;
      self->record(self->leaders[i], ok, why);
    }
    self->choose();
    self->timer.expires_after(self->settings.interval);
    co_await self->timer.async_wait(net::kNoThrow);
  }
}

asio::awaitable<bool> LeaderHubs::State::probe(const LeaderHub& hub, std::string* why) {
  const net::SourceAddress address{hub.ip, settings.port, settings.tls->get()};
  net::SourceStream stream(executor, address);
  stream.socket().expires_after(settings.timeout);
  auto connected = co_await stream.connect();
  if (!connected) {
    *why = connected.error().message;
    co_return false;
  }
  http::request<http::empty_body> req{http::verb::get, "/healthz", 11};
  req.set(http::field::host, address.authority());
  req.set(http::field::user_agent, "multiplexer-proxy-" + settings.node_name);
  req.keep_alive(false);
  auto [wec, wn] = co_await http::async_write(stream, req, net::kNoThrow);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxHealthBody);
  boost::system::error_code rec = wec;
  if (!wec) {
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, net::kNoThrow);
    rec = ec;
  }
  if (rec) {
    *why = "GET /healthz: " + rec.message();
    co_return false;
  }
  if (parser.get().result_int() != 200) {
    *why = "GET /healthz: HTTP " + std::to_string(parser.get().result_int()) + ": " +
           parser.get().body().substr(0, 200);
    co_return false;
  }
  co_return true;
}

void LeaderHubs::State::record(Leader& leader, bool ok, const std::string& why) {
  const bool was = leader.healthy;
  const bool first = !leader.known;
  leader.known = true;
  if (ok) {
    ++leader.successes;
    if (first || leader.successes >= settings.healthy_threshold) leader.healthy = true;
  } else {
    leader.successes = 0;
    leader.healthy = false;
    leader.last_failure = why;
  }
  const std::string name = leader.hub.node + "/" + leader.hub.ip;
  healthy_gauge.with({name}).set(leader.healthy ? 1 : 0);
  if (first || was != leader.healthy) {
    YH_LOG(Info) << "leader hub " << name << " is "
                 << (leader.healthy ? "healthy" : "unhealthy: " + leader.last_failure);
  }
}

void LeaderHubs::State::choose() {
  std::optional<std::size_t> next;
  if (current && leaders[*current].healthy) {
    next = current;
  } else {
    for (std::size_t i = 0; i < leaders.size(); ++i) {
      if (leaders[i].healthy) {
        next = i;
        break;
      }
    }
  }
  if (next == current) return;
  current = next;
  if (next) {
    YH_LOG(Info) << "shared watch cache: feeding from leader hub " << leaders[*next].hub.node
                 << " (" << leaders[*next].hub.ip << ")";
  } else {
    YH_LOG(Warning) << "shared watch cache: no leader hub is healthy; feeding from the cloud";
  }
  if (on_change) on_change();
}

LeaderHubs::LeaderHubs(asio::any_io_executor executor, LeaderHubsSettings settings,
                       base::MetricsRegistry& metrics, std::function<void()> on_change)
    : state_(std::make_shared<State>(std::move(executor), std::move(settings), metrics,
                                     std::move(on_change))) {}

LeaderHubs::~LeaderHubs() {
  try {
    stop();
  } catch (const std::exception& e) {  // stop() dispatches to the executor, which may allocate
    YH_LOG(Error) << "leader hubs: stopping on destruction: " << e.what();
  }
}

void LeaderHubs::set_leaders(std::vector<LeaderHub> leaders) {
  auto& s = *state_;
  std::vector<LeaderHub> old;
  for (const auto& leader : s.leaders) old.push_back(leader.hub);
  if (old == leaders || s.stopped) return;
  for (const auto& leader : s.leaders)
    s.healthy_gauge.with({leader.hub.node + "/" + leader.hub.ip}).set(0);
  s.leaders.clear();
  for (auto& hub : leaders) {
    State::Leader leader;
    leader.hub = std::move(hub);
    s.leaders.push_back(std::move(leader));
  }
  ++s.generation;
  s.timer.cancel();
  const bool had = s.current.has_value();
  s.current.reset();
  if (had) {
    YH_LOG(Info) << "shared watch cache: the pool's leaders changed; feeding from the cloud until "
                    "a leader answers";
    if (s.on_change) s.on_change();
  }
  if (!s.leaders.empty())
    asio::co_spawn(s.executor, State::run(state_, s.generation), asio::detached);
}

std::optional<net::SourceAddress> LeaderHubs::current() const {
  const auto& s = *state_;
  if (!s.current) return std::nullopt;
  return net::SourceAddress{s.leaders[*s.current].hub.ip, s.settings.port, s.settings.tls->get()};
}

const std::string& LeaderHubs::node_name() const { return state_->settings.node_name; }

// Dispatched: the hub's main thread stops the pool while worker 0 may still run the probe loop.
void LeaderHubs::stop() {
  asio::dispatch(state_->executor, [state = state_] {
    if (state->stopped) return;
    state->stopped = true;
    ++state->generation;
    state->timer.cancel();
  });
}

}  // namespace yurthub::pool
