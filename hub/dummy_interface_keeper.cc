// Keeping the dummy interface present; see dummy_interface_keeper.h.
#include "hub/dummy_interface_keeper.h"

#include <algorithm>
#include <string>

#include "base/log.h"

namespace yurthub::hub {
namespace {

// What was repaired, for the log: "re-created", "set up", "given its address back".
std::string describe(const net::DummyInterfaceRepair& r) {
  std::string out;
  auto add = [&](const char* what) { out += (out.empty() ? "" : ", ") + std::string(what); };
  if (r.created) add("re-created");
  if (r.set_up) add("set up");
  if (r.address_added) add("given its address back");
  return out;
}

std::string seconds(std::chrono::milliseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

DummyInterfaceKeeper::DummyInterfaceKeeper(const boost::asio::any_io_executor& executor,
                                           net::DummyInterfaceSpec spec,
                                           base::MetricsRegistry& registry,
                                           std::chrono::milliseconds period,
                                           std::chrono::milliseconds first_retry)
    : spec_(std::move(spec)),
      period_(period),
      first_retry_(std::min(first_retry, period)),
      retry_(first_retry_),
      timer_(executor),
      ready_gauge_(registry
                       .gauge("node_yurthub_dummy_interface_ready",
                              "1 while the dummy interface for pods is in place, 0 while the "
                              "hub runs without it.",
                              {})
                       .with({})),
      failures_(registry
                    .counter("node_yurthub_dummy_interface_failures_total",
                             "Failed attempts to create or repair the dummy interface.", {})
                    .with({})) {}

bool DummyInterfaceKeeper::start() {
  const bool ok = check();
  schedule(ok ? period_ : retry_);
  return ok;
}

void DummyInterfaceKeeper::stop() {
  stopped_ = true;
  timer_.cancel();
}

void DummyInterfaceKeeper::remove() {
  auto deleted = net::delete_dummy_interface(spec_);
  if (!deleted) {
    YH_LOG(Error) << "could not delete dummy interface " << spec_.name << ": "
                  << deleted.error().message;
  } else if (*deleted) {
    YH_LOG(Info) << "dummy interface " << spec_.name << " deleted";
  }
}

void DummyInterfaceKeeper::schedule(std::chrono::milliseconds after) {
  if (stopped_) return;
  timer_.expires_after(after);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;  // cancelled: the keeper may be gone
    if (check()) {
      retry_ = first_retry_;
      schedule(period_);
    } else {
      const auto wait = retry_;
      retry_ = std::min(retry_ * 2, period_);
      schedule(wait);
    }
  });
}

bool DummyInterfaceKeeper::check() {
  auto ensured = net::ensure_dummy_interface(spec_);
  const bool was_ready = ready_;
  const bool first = !checked_;
  checked_ = true;
  if (!ensured) {
    failures_.inc();
    ready_gauge_.set(0);
    ready_ = false;
    problem_ = ensured.error().message;
    if (was_ready || first) {
      // Once per change, not per retry: the retries go on every few seconds.
      YH_LOG(Warning) << problem_ << "; the hub serves 127.0.0.1 without it (pods cannot reach "
                      << spec_.address << " until it exists) and tries again, at most every "
                      << seconds(period_);
    } else {
      YH_LOG(Debug) << "dummy interface still missing: " << problem_;
    }
    return false;
  }
  ready_ = true;
  problem_.clear();
  ready_gauge_.set(1);
  if (first) {
    YH_LOG(Info) << "dummy interface " << spec_.name << " with " << spec_.address
                 << (ensured->created ? " created" : " in place");
  } else if (!was_ready) {
    YH_LOG(Info) << "dummy interface " << spec_.name << " with " << spec_.address
                 << " is in place now";
  } else if (ensured->any()) {
    YH_LOG(Warning) << "dummy interface " << spec_.name
                    << " was changed by someone else: " << describe(*ensured);
  }
  if (!ever_ready_) {
    ever_ready_ = true;
    if (!first && on_first_ready_) on_first_ready_();
  }
  return true;
}

}  // namespace yurthub::hub
