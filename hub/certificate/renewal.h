// The schedule both of the hub's certificates follow (the client identity and the HTTPS port's
// serving certificate): when to renew (client-go's jittered 70-90 %), the loop that waits for that
// moment and retries with a backoff, and the start-up wait of YurtHub (every 5 s for 4 minutes).
// Used by ClientCertificateManager and ServingCertificateManager, on the former's thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>

#include "base/log.h"
#include "base/metrics.h"
#include "base/result.h"
#include "net/http_io.h"
#include "net/timer.h"

namespace yurthub::hub {

// When to renew a certificate valid from `not_before` to `not_after`: at a uniformly random point
// between 70 % and 90 % of its lifetime (client-go's nextRotationDeadline).
std::chrono::system_clock::time_point renewal_time(std::chrono::system_clock::time_point not_before,
                                                   std::chrono::system_clock::time_point not_after);

// `t` in UTC with a strftime format: "2026-11-24T07:00:00Z" by default.
std::string utc_text(std::chrono::system_clock::time_point t,
                     const char* format = "%Y-%m-%dT%H:%M:%SZ");

struct Renewal {
  std::string what;                      // "client certificate", for the log
  std::function<std::string()> current;  // the PEM certificate in use now ("" if none)
  std::function<boost::asio::awaitable<Status>()> renew;  // obtain, store and use a new one
  base::CounterFamily* renewals;                          // {result="success"|"failure"}
  std::chrono::milliseconds retry_max{std::chrono::minutes(1)};
};

// Renews forever: waits for the renewal time, then calls renew() until it succeeds (backoff from
// 1 s to retry_max). Right after a renewal, the next is never sooner than half the new
// certificate's remaining validity: a signer backdates notBefore by five minutes, which would put
// a short certificate's 70-90 % point in the past at once and renew it in a loop. `wake`, when
// cancelled, ends a backoff early (a new join token). Ends when its executor stops.
boost::asio::awaitable<void> renew_forever(net::Timer& wake, Renewal renewal);

// As YurtHub at start: calls `attempt` again every 5 s for up to `wait`, unless it fails with
// InvalidArgument (trying again cannot help: a pin that does not match, a denied CSR).
template <class T>
boost::asio::awaitable<Result<T>> retry_at_start(
    std::function<boost::asio::awaitable<Result<T>>()> attempt, std::chrono::milliseconds wait,
    const char* what) {
  const auto deadline = base::Clock::now() + wait;
  const auto executor = co_await boost::asio::this_coro::executor;
  net::Timer timer(executor);
  for (;;) {
    auto obtained = co_await attempt();
    if (obtained || obtained.error().code == ErrorCode::InvalidArgument ||
        base::Clock::now() >= deadline) {
      co_return obtained;
    }
    YH_LOG(Warning) << "cannot get a " << what << " yet: " << obtained.error().message;
    timer.expires_after(std::min<std::chrono::steady_clock::duration>(
        std::chrono::seconds(5), deadline - base::Clock::now()));
    co_await timer.async_wait(net::kNoThrow);
  }
}

// Runs `work` to completion on a private io_context, for start-up before the hub's threads run
// (each manager's obtain()). nullopt if it never completed.
template <class T>
std::optional<T> run_at_start(std::function<boost::asio::awaitable<T>()> work) {
  std::optional<T> result;
  boost::asio::io_context local;
  boost::asio::co_spawn(
      local, [&]() -> boost::asio::awaitable<void> { result.emplace(co_await work()); },
      boost::asio::detached);
  local.run();
  return result;
}

}  // namespace yurthub::hub
