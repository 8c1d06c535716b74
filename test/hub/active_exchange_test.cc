// Tests of ActiveExchange (hub/active_exchange.h): which server health changes and drains end a
// stream, what stop() aborts, and which way a correction of a filtered watch goes out.
#include "hub/active_exchange.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

namespace yurthub::hub {
namespace {

// An upstream whose socket counts the cancels stop() makes (net::cancel_socket's lowest layer).
struct CountingSocket {
  int cancels = 0;
  void cancel(boost::system::error_code&) { ++cancels; }
};
struct CountingStream {
  CountingSocket counting;
  CountingSocket& socket() { return counting; }
};
struct CountingUpstream {
  CountingStream stream;
  int cancels() const { return stream.counting.cancels; }
};

class StubFilter final : public ResponseFilter {
 public:
  explicit StubFilter(bool reactive) : reactive_(reactive) {}
  FilterStatus feed(std::string_view, std::string*) override { return FilterStatus::Send; }
  FilterStatus event(std::string_view, std::string*) override { return FilterStatus::Send; }
  void unframeable(std::string_view) override {}
  FilterStatus finish(std::string*) override { return FilterStatus::Send; }
  std::string_view cut_reason() const override { return {}; }
  bool reactive() const override { return reactive_; }
  FilterStatus correct(std::string*) override { return FilterStatus::Hold; }

 private:
  bool reactive_;
};

using Route = ActiveExchange::CorrectionRoute;

// Waits on `wake` for an hour; `cancelled` turns true when something cancels the wait first.
void wait_for_cancel(net::Timer& wake, bool& cancelled) {
  wake.expires_after(std::chrono::hours(1));
  wake.async_wait([&cancelled](boost::system::error_code ec) {
    cancelled = ec == boost::asio::error::operation_aborted;
  });
}

TEST(ActiveExchange, ARelayedStreamEndsWhenItsOwnServerTurnsUnhealthy) {
  ActiveExchange active;
  CountingUpstream upstream;
  active.begin(1);
  active.attach_upstream(&upstream);
  active.server_health_changed(1, false);  // not streaming yet: a short request finishes
  EXPECT_FALSE(active.stopped());

  active.relaying_stream();
  active.server_health_changed(2, false);  // another server
  active.server_health_changed(1, true);   // its server is healthy
  EXPECT_FALSE(active.stopped());
  active.server_health_changed(1, false);
  EXPECT_EQ(active.stopped(), StreamEnd::ServerUnhealthy);
  EXPECT_EQ(upstream.cancels(), 1);
}

TEST(ActiveExchange, AnOfflineStreamEndsWhenAServerIsHealthyAgainButASharedOneDoesNot) {
  boost::asio::io_context io;
  net::Timer wake(io.get_executor());
  ActiveExchange offline;
  offline.begin(0);
  offline.local_stream(&wake);
  offline.server_health_changed(0, false);
  EXPECT_FALSE(offline.stopped());
  offline.server_health_changed(3, true);
  EXPECT_EQ(offline.stopped(), StreamEnd::ServerHealthy);

  ActiveExchange shared;
  shared.begin(0);
  shared.local_stream(&wake);
  shared.from_shared_cache();
  shared.server_health_changed(3, true);
  shared.server_health_changed(0, false);
  EXPECT_FALSE(shared.stopped());
}

TEST(ActiveExchange, ADrainEndsStreamsOnlyAndTheFirstReasonWins) {
  ActiveExchange active;
  active.begin(0);
  active.hub_draining();
  EXPECT_FALSE(active.stopped());
  active.relaying_stream();
  active.stop(StreamEnd::ClientGone);
  active.hub_draining();
  EXPECT_EQ(active.stopped(), StreamEnd::ClientGone);
}

TEST(ActiveExchange, StopWakesALocalStreamAndScopeClearsEverything) {
  boost::asio::io_context io;
  net::Timer wake(io.get_executor());
  bool aborted = false;
  wait_for_cancel(wake, aborted);
  ActiveExchange active;
  {
    const ActiveScope scope(active, nullptr, 0);
    active.local_stream(&wake);
    active.stop(StreamEnd::HubDraining);
    io.poll();
    EXPECT_TRUE(aborted);
    EXPECT_TRUE(active.streaming());
  }
  EXPECT_FALSE(active.streaming());
  EXPECT_FALSE(active.stopped());
}

TEST(ActiveExchange, NoCorrectionWithoutAReactiveFilteredWatchGoingOn) {
  StubFilter reactive(true), fixed(false);
  ActiveExchange active;
  active.begin(0);
  EXPECT_EQ(active.request_correction(), Route::None);  // not streaming
  active.relaying_stream(&fixed, nullptr, true);
  EXPECT_EQ(active.request_correction(), Route::None);  // the filters never change their mind
  active.relaying_stream(&reactive, nullptr, true);
  active.stop(StreamEnd::ClientGone);
  EXPECT_EQ(active.request_correction(), Route::None);  // ending
  EXPECT_FALSE(active.take_correction());
}

TEST(ActiveExchange, ARelayedWatchIsCorrectedByAWriterWhenIdleElseAfterItsWrite) {
  StubFilter filter(true);
  ActiveExchange active;
  active.begin(1);
  active.relaying_stream(&filter, nullptr, true);

  // The relay is writing: the correction waits for it, and is taken once.
  EXPECT_EQ(active.request_correction(), Route::AfterWrite);
  EXPECT_TRUE(active.take_correction());
  EXPECT_FALSE(active.take_correction());

  // The relay waits for the apiserver: a writer goes now, and one at a time.
  active.upstream_read(true);
  EXPECT_EQ(active.request_correction(), Route::SpawnWriter);
  EXPECT_TRUE(active.correction_writer_running());
  EXPECT_EQ(active.request_correction(), Route::AfterWrite);
  EXPECT_FALSE(active.take_correction());  // not the relay's while the writer runs
  EXPECT_TRUE(active.writer_takes_correction());
  EXPECT_FALSE(active.writer_takes_correction());
  active.correction_writer_done();
  EXPECT_FALSE(active.correction_writer_running());
  EXPECT_FALSE(active.take_correction());
}

TEST(ActiveExchange, ALocalWatchIsCorrectedWhenItsWaitWakes) {
  boost::asio::io_context io;
  net::Timer wake(io.get_executor());
  bool woken = false;
  wait_for_cancel(wake, woken);
  StubFilter filter(true);
  ActiveExchange active;
  active.begin(0);
  active.local_stream(&wake);
  EXPECT_EQ(active.request_correction(), Route::None);  // no filter yet
  active.local_filter(&filter);
  EXPECT_EQ(active.request_correction(), Route::WakeLocal);
  io.poll();
  EXPECT_TRUE(woken);
  EXPECT_TRUE(active.take_correction());
  EXPECT_FALSE(active.take_correction());
}

TEST(ActiveExchange, AReactiveWatchStartsWithACorrectionPending) {
  StubFilter filter(true);
  ActiveExchange active;
  active.begin(0);
  active.relaying_stream(&filter, nullptr, false);
  active.correction_at_start();
  EXPECT_TRUE(active.take_correction());
}

}  // namespace
}  // namespace yurthub::hub
