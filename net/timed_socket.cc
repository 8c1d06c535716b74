// The deadline bookkeeping of net::TimedSocket (see timed_socket.h); runs on the socket's
// executor, as the stream's operations do.
#include "net/timed_socket.h"

namespace yurthub::net {
namespace timed_socket_detail {

void State::starting(Direction& d) {
  if (d.deadline == base::Clock::time_point::max() || base::Clock::now() < d.deadline) return;
  d.timed_out = true;
  close();
}

void State::arm() {
  base::Clock::time_point due = base::Clock::time_point::max();
  if (read.pending > 0) due = read.deadline;
  if (write.pending > 0 && write.deadline < due) due = write.deadline;
  if (due == base::Clock::time_point::max()) return;  // a wait still pending finds nothing to do
  if (waiting && timer.expiry() <= due) return;       // it fires in time and looks again
  timer.expires_at(due);                              // cancels a later wait, which is then stale
  waiting = true;
  const std::uint64_t wait = ++generation;
  timer.async_wait([weak = weak_from_this(), wait](boost::system::error_code ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->on_timer(wait);
  });
}

void State::on_timer(std::uint64_t wait) {
  if (wait != generation) return;
  waiting = false;
  const auto now = base::Clock::now();
  bool expired = false;
  for (Direction* d : {&read, &write}) {
    if (d->pending > 0 && d->deadline <= now) {
      d->timed_out = true;
      expired = true;
    }
  }
  if (expired)
    close();
  else
    arm();  // woken early (the deadline moved later, or the clock polls): wait again
}

void State::close() noexcept {
  boost::system::error_code ignored;
  socket.close(ignored);
  waiting = false;
  ++generation;  // the cancelled wait, if any, is stale
  try {
    timer.cancel();
  } catch (...) {  // NOLINT(bugprone-empty-catch): closing cannot fail; the timer is dropped
  }
}

}  // namespace timed_socket_detail

void TimedSocket::expires_at(base::Clock::time_point at) {
  // As beast::basic_stream: a direction with an operation pending keeps the deadline it started
  // with.
  if (state_->read.pending == 0) state_->read.deadline = at;
  if (state_->write.pending == 0) state_->write.deadline = at;
}

}  // namespace yurthub::net
