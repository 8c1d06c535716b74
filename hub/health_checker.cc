// Apiserver health probing; see health_checker.h.
#include "hub/health_checker.h"

#include <algorithm>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "hub/upstream_pool.h"
#include "net/spawn.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::optional<bool> HealthState::record(bool success) {
  if (!known_) {
    known_ = true;
    healthy_ = success;
    successes_ = success ? 1 : 0;
    return healthy_;
  }
  if (!success) {
    successes_ = 0;
    if (!healthy_) return std::nullopt;
    healthy_ = false;
    return false;
  }
  ++successes_;
  if (healthy_ || successes_ < threshold_) return std::nullopt;
  healthy_ = true;
  return true;
}

HealthChecker::Settings HealthChecker::settings_from(const HubOptions& o) {
  Settings s;
  s.interval = std::chrono::seconds(o.heartbeat_interval_seconds);
  s.timeout = std::chrono::seconds(o.heartbeat_timeout_seconds);
  s.attempts = o.heartbeat_failed_retry;
  s.healthy_threshold = o.heartbeat_healthy_threshold;
  s.recovery_interval = std::min<std::chrono::milliseconds>(s.recovery_interval, s.interval);
  return s;
}

HealthChecker::HealthChecker(asio::any_io_executor executor, ServerSet& servers,
                             const net::UpstreamTls& tls, Settings settings, HubMetrics& metrics,
                             std::function<void(std::size_t, bool)> on_change)
    : executor_(std::move(executor)),
      servers_(servers),
      tls_(tls),
      settings_(settings),
      metrics_(metrics),
      on_change_(std::move(on_change)),
      states_(servers.size(), HealthState(settings.healthy_threshold)),
      last_failure_(servers.size()),
      kept_(servers.size()) {
  for (std::size_t i = 0; i < servers.size(); ++i) {
    wake_.push_back(std::make_unique<net::Timer>(executor_));
  }
}

void HealthChecker::start() {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    net::spawn_detached(executor_, run_server(i), "health checker");
  }
}

void HealthChecker::stop() {
  asio::post(executor_, [this] {
    stopped_ = true;
    for (auto& timer : wake_) timer->cancel();
  });
}

void HealthChecker::probe_soon(std::size_t server) {
  asio::post(executor_, [this, server] { wake_[server]->cancel(); });
}

asio::awaitable<void> HealthChecker::run_server(std::size_t server) {
  const std::string& url = servers_.address(server).url;
  while (!stopped_) {
    Outcome outcome = Outcome::Unreachable;
    for (int attempt = 0; attempt < settings_.attempts && outcome != Outcome::Ready && !stopped_;
         ++attempt) {
      outcome = co_await probe_once(server);
    }
    if (stopped_) break;
    const bool success = outcome == Outcome::Ready;
    metrics_.probes.with({url, success ? "success" : "failure"}).inc();
    const bool first = !states_[server].known();
    if (auto changed = states_[server].record(success)) {
      servers_.set_healthy(server, *changed);
      metrics_.server_healthy.with({url}).set(*changed ? 1 : 0);
      if (*changed) {
        YH_LOG(Info) << "apiserver " << url << " is healthy";
      } else {
        YH_LOG(Warning) << "apiserver " << url << " is unhealthy: " << last_failure_[server];
      }
      on_change_(server, *changed);
    }
    if (first) ++initial_done_;
    wake_[server]->expires_after(next_wait(server, outcome));
    co_await wake_[server]->async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

std::chrono::milliseconds HealthChecker::next_wait(std::size_t server, Outcome last) const {
  if (states_[server].healthy() || last == Outcome::NotReady) return settings_.interval;
  return settings_.recovery_interval;
}

asio::awaitable<HealthChecker::Outcome> HealthChecker::probe_once(std::size_t server) {
  const ServerAddress& address = servers_.address(server);
  const auto deadline = base::Clock::now() + settings_.timeout;
  UpstreamConnectionPtr conn = std::move(kept_[server]);
  if (conn && (conn->context != tls_.hub_identity->get() || !looks_alive(*conn))) conn.reset();
  Answer answer;
  if (conn) {
    answer = co_await ask_readyz(*conn, server, deadline);
    // No answer on a kept connection: the apiserver may have closed it as the probe went out.
    // A fresh one decides, unless the time is up.
    if (!answer.code && answer.timed_out) co_return Outcome::Unreachable;
    if (!answer.code) conn.reset();
  }
  if (!conn) {
    const auto fresh_deadline = base::Clock::now() + settings_.timeout;  // dial and exchange
    auto fresh =
        co_await connect_upstream(executor_, address, tls_, Identity::Hub, settings_.timeout);
    if (!fresh) {
      last_failure_[server] = fresh.error().message;
      YH_LOG(Debug) << "probe of " << address.url << " failed: " << fresh.error().message;
      co_return Outcome::Unreachable;
    }
    conn = std::move(*fresh);
    answer = co_await ask_readyz(*conn, server, fresh_deadline);
  }
  if (!answer.code) co_return Outcome::Unreachable;
  if (answer.keep) kept_[server] = std::move(conn);
  if (*answer.code != 200) {
    last_failure_[server] = "/readyz answered " + std::to_string(*answer.code);
    YH_LOG(Debug) << "probe of " << address.url << " answered " << *answer.code;
    co_return Outcome::NotReady;
  }
  co_return Outcome::Ready;
}

asio::awaitable<HealthChecker::Answer> HealthChecker::ask_readyz(
    UpstreamConnection& conn, std::size_t server, std::chrono::steady_clock::time_point deadline) {
  const ServerAddress& address = servers_.address(server);
  auto& stream = conn.stream;
  beast::get_lowest_layer(stream).expires_at(deadline);
  http::request<http::empty_body> req{http::verb::get, "/readyz", 11};
  req.set(http::field::host, servers_.authority(server));
  req.set(http::field::user_agent, "yurthub/health-probe");
  if (auto bearer = tls_.hub_authorization(); !bearer.empty()) {
    req.set(http::field::authorization, bearer);
  }
  auto [wec, wn] = co_await http::async_write(stream, req, asio::as_tuple(asio::use_awaitable));
  if (wec) {
    last_failure_[server] = "sending the probe: " + wec.message();
    co_return Answer{.timed_out = wec == beast::error::timeout};
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024);
  auto [rec, rn] =
      co_await http::async_read(stream, conn.buffer, parser, asio::as_tuple(asio::use_awaitable));
  if (rec) {
    last_failure_[server] = "reading the probe's answer: " + rec.message();
    YH_LOG(Debug) << "probe of " << address.url << " failed: " << rec.message();
    co_return Answer{.timed_out = rec == beast::error::timeout};
  }
  beast::get_lowest_layer(stream).expires_never();
  co_return Answer{.code = parser.get().result_int(),
                   .keep = parser.keep_alive() && conn.buffer.size() == 0};
}

}  // namespace yurthub::hub
