// The other half of net::Timer (net/timer.h): each event loop with a net::Timer gets a
// ClockWaker, an Asio service that listens for moves of a held clock (base::ClockListeners) and
// answers each by waiting on a timer already due. Scheduling the earliest timer makes the loop's
// reactor look at every timer queue again, so what the move made due fires then. Called by
// net::Timer's constructor; a test's TestClock::advance calls the listeners.
#include "net/timer.h"

#include <memory>
#include <mutex>
#include <optional>

#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>

namespace yurthub::net {
namespace {

namespace asio = boost::asio;
using Executor = BasicTimer::executor_type;

class ClockWaker final : public asio::execution_context::service {
 public:
  static inline asio::execution_context::id id;

  explicit ClockWaker(asio::execution_context& context) : service(context) {
    base::ClockListeners::add(this, &ClockWaker::wake);
  }
  ~ClockWaker() override { base::ClockListeners::remove(this); }
  ClockWaker(const ClockWaker&) = delete;
  ClockWaker& operator=(const ClockWaker&) = delete;

  // The loop's executor, from its first timer; untracked, so the loop still runs out of work.
  void remember(const Executor& executor) {
    std::lock_guard lock(mutex_);
    if (!executor_ && !shut_down_)
      executor_.emplace(asio::prefer(executor, asio::execution::outstanding_work.untracked));
  }

 private:
  void shutdown() override {
    base::ClockListeners::remove(this);  // waits out a wake() under way
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    executor_.reset();
  }

  static void wake(void* listener) {
    auto* self = static_cast<ClockWaker*>(listener);
    std::optional<Executor> executor;
    {
      std::lock_guard lock(self->mutex_);
      executor = self->executor_;
    }
    if (!executor) return;
    auto due = std::make_shared<BasicTimer>(*executor, BasicTimer::time_point::min());
    due->async_wait([due](const boost::system::error_code&) {});
  }

  std::mutex mutex_;
  std::optional<Executor> executor_;
  bool shut_down_ = false;
};

}  // namespace

void wake_on_clock_moves(const Executor& executor) {
  asio::use_service<ClockWaker>(asio::query(executor, asio::execution::context)).remember(executor);
}

}  // namespace yurthub::net
