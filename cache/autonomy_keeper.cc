// Keeps the node's Autonomy condition; see autonomy_keeper.h. One coroutine on the executor given.
#include "cache/autonomy_keeper.h"

#include <boost/asio/post.hpp>

#include "base/log.h"
#include "base/time_text.h"
#include "net/http_io.h"
#include "net/spawn.h"

namespace yurthub::cache {
namespace asio = boost::asio;

AutonomyKeeper::AutonomyKeeper(Settings settings, base::MetricsRegistry& registry)
    : settings_(std::move(settings)),
      checks_(registry.counter("node_yurthub_autonomy_checks_total",
                               "Checks of the node's Autonomy condition by outcome: offline (no "
                               "healthy apiserver: nothing read or written), unreadable (the node "
                               "could not be read), unchanged, written, write_failed.",
                               {"outcome"})) {
  for (const char* outcome : {"offline", "unreadable", "unchanged", "written", "write_failed"}) {
    checks_.with({outcome}).inc(0);
  }
}

void AutonomyKeeper::start() {
  if (running_.exchange(true)) return;
  net::spawn_detached(settings_.executor, run(), "autonomy condition");
}

void AutonomyKeeper::stop() {
  if (stopping_.exchange(true) || !running_) return;
  asio::post(settings_.executor, [this] {
    if (timer_ != nullptr) timer_->cancel();
  });
}

asio::awaitable<void> AutonomyKeeper::run() {
  net::Timer timer(settings_.executor);
  timer_ = &timer;
  struct Forget {
    net::Timer*& timer;
    ~Forget() { timer = nullptr; }
  } forget{timer_};
  auto last_check = base::Clock::now();
  auto last_state = settings_.cache_health().state;
  bool was_online = false;
  bool first = true;
  while (!stopping_) {
    const auto state = settings_.cache_health().state;
    const bool online = !settings_.online || settings_.online();
    const bool back_online = online && !was_online;
    was_online = online;
    if (first || back_online || state != last_state ||
        base::Clock::now() - last_check >= settings_.interval) {
      first = false;
      last_state = state;
      last_check = base::Clock::now();
      co_await check();
      continue;
    }
    timer.expires_after(settings_.health_poll);
    co_await timer.async_wait(net::kNoThrow);
  }
}

asio::awaitable<void> AutonomyKeeper::check() {
  // Named, not a temporary in the co_await: GCC 12 frees a braced temporary's strings twice.
  CloudRequest read{"GET", "/api/v1/nodes/" + settings_.node_name, "", ""};
  auto node = co_await settings_.call_cloud(std::move(read));
  std::string skip;
  if (!node) {
    skip = "no apiserver to read the node from (" + node.error().message + ")";
    checks_.with({"offline"}).inc();
  } else if (node->status != 200) {
    skip = "reading the node answered " + std::to_string(node->status);
    checks_.with({"unreadable"}).inc();
  } else {
    const CacheHealth health = settings_.cache_health();
    AutonomyDecision decision = decide_autonomy(node->body, health, cache_failures_,
                                                base::rfc3339_utc(settings_.unix_now()));
    if (decision.cache_failures > cache_failures_) {
      YH_LOG(Warning) << "autonomy: the cache is failing (check " << decision.cache_failures
                      << "): " << health.message;
    }
    cache_failures_ = decision.cache_failures;
    skip = decision.skipped;
    if (decision.write) {
      const bool written = co_await write(*decision.write);
      checks_.with({written ? "written" : "write_failed"}).inc();
    } else {
      checks_.with({skip.empty() ? "unchanged" : "unreadable"}).inc();
    }
  }
  // Offline, or a node not registered yet: said once, not every 10 s.
  if (!skip.empty() && skip != last_skip_)
    YH_LOG(Info) << "autonomy: condition unchanged: " << skip;
  last_skip_ = std::move(skip);
}

asio::awaitable<bool> AutonomyKeeper::write(const NodeCondition& condition) {
  CloudRequest patch{"PATCH", "/api/v1/nodes/" + settings_.node_name + "/status",
                     "application/strategic-merge-patch+json", autonomy_patch(condition)};
  auto answer = co_await settings_.call_cloud(std::move(patch));
  if (answer && answer->status == 200) {
    YH_LOG(Info) << "autonomy: node condition Autonomy=" << condition.status << " ("
                 << condition.reason << ": " << condition.message << ")";
    co_return true;
  }
  YH_LOG(Warning) << "autonomy: cannot write the node's Autonomy condition: "
                  << (answer ? std::to_string(answer->status) + " " + answer->body.substr(0, 300)
                             : answer.error().message);
  co_return false;
}

}  // namespace yurthub::cache
