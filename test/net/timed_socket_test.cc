// net::TimedSocket (net/timed_socket.h) over a loopback connection, with the hub's clock frozen
// (base::TestClock): deadlines end only the operations they bound, and only once the clock
// passes them; a deadline set while an operation is pending is the next one's; the lazy timer
// neither ends a later operation early nor misses an earlier deadline; cancellation slots and
// destruction with an operation pending still work. One thread, no sleeps: the event loop is
// run until the awaited result is in, or for a few polls when nothing may happen. The synchronous
// read and write never wait: with nothing to read, or a peer that reads nothing, they say
// would_block.
#include "net/timed_socket.h"

#include <optional>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "test/net/without_waiting.h"

namespace yurthub::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using std::chrono::hours;
using std::chrono::seconds;

struct Outcome {
  boost::system::error_code ec;
  std::size_t bytes = 0;
};

class TimedSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tcp::acceptor acceptor(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    socket_.emplace(io_.get_executor());
    Outcome connected;
    bool done = false;
    socket_->async_connect(acceptor.local_endpoint(), [&](boost::system::error_code ec) {
      connected.ec = ec;
      done = true;
    });
    peer_ = acceptor.accept();
    run_until([&] { return done; });
    ASSERT_FALSE(connected.ec) << connected.ec.message();
  }

  // Starts a read into buffer_; the outcome appears in `out` when it completes.
  void start_read(std::optional<Outcome>& out) {
    socket_->async_read_some(asio::buffer(buffer_),
                             [&out](boost::system::error_code ec, std::size_t n) {
                               out = Outcome{ec, n};
                             });
  }

  template <class Done>
  void run_until(Done done) {
    for (int i = 0; i < 5000 && !done(); ++i) io_.run_for(std::chrono::milliseconds(1));
    io_.restart();
  }
  // Runs the loop until the operation writing `outcome` has completed; false if it never does.
  template <class T>
  bool completes(std::optional<T>& outcome) {
    run_until([&] { return outcome.has_value(); });
    return outcome.has_value();
  }
  // Lets the loop run a while: what a move of the clock made due fires in it.
  void spin() {
    io_.run_for(std::chrono::milliseconds(20));
    io_.restart();
  }
  void peer_sends(const char* text) { asio::write(peer_, asio::buffer(std::string(text))); }

  base::TestClock clock_;
  asio::io_context io_;
  std::optional<TimedSocket> socket_;
  tcp::socket peer_{io_};
  char buffer_[64];
};

TEST_F(TimedSocketTest, AReadPendingPastItsDeadlineTimesOutAndClosesTheSocket) {
  socket_->expires_after(seconds(30));
  std::optional<Outcome> read;
  start_read(read);
  clock_.advance(seconds(29));
  spin();
  EXPECT_FALSE(read) << "ended before its deadline";

  clock_.advance(seconds(2));
  ASSERT_TRUE(completes(read));
  EXPECT_EQ(read->ec, boost::beast::error::timeout);
  EXPECT_FALSE(socket_->socket().is_open());
}

TEST_F(TimedSocketTest, WithoutADeadlineAReadWaitsForData) {
  socket_->expires_after(seconds(1));
  socket_->expires_never();
  std::optional<Outcome> read;
  start_read(read);
  clock_.advance(hours(24));
  spin();
  EXPECT_FALSE(read);
  peer_sends("hello");
  ASSERT_TRUE(completes(read));
  EXPECT_FALSE(read->ec);
  EXPECT_EQ(read->bytes, 5u);
}

TEST_F(TimedSocketTest, ADeadlineSetWhileAReadIsPendingBoundsTheNextWriteNotThatRead) {
  std::optional<Outcome> read;
  start_read(read);  // no deadline: a client watcher's read
  socket_->expires_after(seconds(5));
  clock_.advance(seconds(10));
  spin();
  EXPECT_FALSE(read) << "the pending read took the later deadline";

  // The write's deadline (5 s) has passed: it fails as soon as it starts, as with beast.
  std::optional<Outcome> write;
  socket_->async_write_some(asio::buffer("x", 1), [&](boost::system::error_code ec, std::size_t n) {
    write = Outcome{ec, n};
  });
  ASSERT_TRUE(completes(write));
  EXPECT_EQ(write->ec, boost::beast::error::timeout);
  ASSERT_TRUE(completes(read));  // the socket is closed under it, but the read did not time out
  EXPECT_EQ(read->ec, asio::error::operation_aborted);
}

TEST_F(TimedSocketTest, AnEarlierWaitDoesNotEndALaterDeadlinesRead) {
  socket_->expires_after(seconds(5));
  std::optional<Outcome> first;
  start_read(first);
  peer_sends("a");
  ASSERT_TRUE(completes(first));
  ASSERT_FALSE(first->ec);

  // The timer still waits for the first deadline; the second read's is later.
  socket_->expires_after(seconds(30));
  std::optional<Outcome> second;
  start_read(second);
  clock_.advance(seconds(10));
  spin();
  EXPECT_FALSE(second) << "ended at the first read's deadline";
  clock_.advance(seconds(25));
  ASSERT_TRUE(completes(second));
  EXPECT_EQ(second->ec, boost::beast::error::timeout);
}

TEST_F(TimedSocketTest, ALaterWaitDoesNotMissAnEarlierDeadline) {
  socket_->expires_after(hours(1));
  std::optional<Outcome> first;
  start_read(first);
  peer_sends("a");
  ASSERT_TRUE(completes(first));

  socket_->expires_after(seconds(1));
  std::optional<Outcome> second;
  start_read(second);
  clock_.advance(seconds(2));
  ASSERT_TRUE(completes(second)) << "waited for the first read's hour";
  EXPECT_EQ(second->ec, boost::beast::error::timeout);
}

TEST_F(TimedSocketTest, ACancelledReadIsAbortedNotTimedOut) {
  // awaitable operators cancel the losing operation through its cancellation slot, which the
  // stream must pass on to the socket (the tunnel relies on it).
  using namespace asio::experimental::awaitable_operators;
  socket_->expires_after(seconds(30));
  std::optional<bool> read_won;
  auto race = [&]() -> asio::awaitable<void> {
    Timer timer(io_, seconds(1));
    auto result = co_await (socket_->async_read_some(asio::buffer(buffer_), asio::use_awaitable) ||
                            timer.async_wait(asio::use_awaitable));
    read_won = result.index() == 0;
  };
  asio::co_spawn(io_, race(), asio::detached);
  spin();  // the race starts, its timer set for a second from now
  clock_.advance(seconds(2));
  ASSERT_TRUE(completes(read_won));
  EXPECT_FALSE(*read_won);
  EXPECT_TRUE(socket_->socket().is_open()) << "a cancelled read must not close the socket";

  // The stream is still usable, with its deadline.
  std::optional<Outcome> next;
  start_read(next);
  peer_sends("b");
  ASSERT_TRUE(completes(next));
  EXPECT_FALSE(next->ec);
}

TEST_F(TimedSocketTest, DestroyedWithAReadPendingCompletesItAborted) {
  socket_->expires_after(seconds(5));
  std::optional<Outcome> read;
  start_read(read);
  socket_.reset();
  clock_.advance(seconds(10));  // the timer's wait must not touch the destroyed stream
  ASSERT_TRUE(completes(read));
  EXPECT_EQ(read->ec, asio::error::operation_aborted);
}

TEST_F(TimedSocketTest, SynchronousReadsAndWritesNeverWait) {
  boost::system::error_code read_ec;
  std::size_t read = 1;
  ASSERT_TRUE(test_support::finishes_without_waiting(
      [&] { read = socket_->read_some(asio::buffer(buffer_), read_ec); }, *socket_))
      << "a read with nothing to read waited";
  EXPECT_EQ(read, 0u);
  EXPECT_EQ(read_ec, asio::error::would_block);

  // The peer reads nothing: the kernel's buffers fill, and then a write says so.
  boost::system::error_code write_ec;
  std::size_t written = 0;
  const std::string block(64 * 1024, 'x');
  ASSERT_TRUE(test_support::finishes_without_waiting(
      [&] {
        for (int i = 0; i < 10000 && !write_ec; ++i) {
          written += socket_->write_some(asio::buffer(block), write_ec);
        }
      },
      *socket_))
      << "a write to a full socket waited";
  EXPECT_EQ(write_ec, asio::error::would_block);
  EXPECT_GT(written, block.size());
  EXPECT_TRUE(socket_->socket().is_open());

  // The asynchronous operations are unaffected: a read still waits for data.
  std::optional<Outcome> next;
  start_read(next);
  spin();
  EXPECT_FALSE(next);
  peer_sends("b");
  ASSERT_TRUE(completes(next));
  EXPECT_FALSE(next->ec);
  EXPECT_EQ(next->bytes, 1u);
}

}  // namespace
}  // namespace yurthub::net
