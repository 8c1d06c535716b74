// Worker threads; see worker.h.
#include "hub/worker.h"

#include <boost/asio/post.hpp>

#include "base/thread_name.h"

namespace yurthub::hub {
namespace asio = boost::asio;

Worker::Worker(SharedState& shared)
    : shared_(shared),
      pool_(io_.get_executor(), shared.servers, shared.tls, shared.metrics),
      request_series_(shared.metrics),
      reap_timer_(io_) {
  schedule_reap();
}

void Worker::schedule_reap() {
  reap_timer_.expires_after(std::chrono::seconds(30));
  reap_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    pool_.reap();
    schedule_reap();
  });
}

void Worker::post_server_health(std::size_t server, bool healthy) {
  asio::post(io_, [this, server, healthy] {
    if (!healthy) pool_.drop_server(server);
    // Copy: a session may end (and unregister) while being told.
    std::vector<SessionControl*> sessions(sessions_.begin(), sessions_.end());
    for (auto* s : sessions) {
      if (sessions_.count(s)) s->on_server_health(server, healthy);
    }
  });
}

void Worker::post_drain() {
  asio::post(io_, [this] {
    reap_timer_.cancel();
    pool_.drop_all();
    std::vector<SessionControl*> sessions(sessions_.begin(), sessions_.end());
    for (auto* s : sessions) {
      if (sessions_.count(s)) s->on_drain();
    }
  });
}

void Worker::post_filters_changed() {
  asio::post(io_, [this] {
    std::vector<SessionControl*> sessions(sessions_.begin(), sessions_.end());
    for (auto* s : sessions) {
      if (sessions_.count(s)) s->on_filters_changed();
    }
  });
}

void Worker::start_thread() {
  thread_ = std::thread([this] {
    base::name_this_thread("yh-worker");
    io_.run();
  });
}

void Worker::run_here() { io_.run(); }

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

SessionRegistration::SessionRegistration(Worker& worker, SessionControl* session)
    : worker_(worker), session_(session) {
  worker_.sessions_.insert(session_);
  ++worker_.session_count_;
}

SessionRegistration::~SessionRegistration() {
  worker_.sessions_.erase(session_);
  --worker_.session_count_;
}

}  // namespace yurthub::hub
