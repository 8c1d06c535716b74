// spawn_detached(): an exception escaping a background coroutine is counted (and logged), not
// dropped as asio::detached drops it; a coroutine that returns is not counted.
#include "net/spawn.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include <boost/asio/io_context.hpp>

namespace yurthub::net {
namespace {

boost::asio::awaitable<void> returns(bool* ran) {
  *ran = true;
  co_return;
}

boost::asio::awaitable<void> throws() {
  throw std::runtime_error("a bug");
  co_return;
}

TEST(SpawnDetached, CountsEscapedExceptionsOnly) {
  boost::asio::io_context io;
  const std::uint64_t before = escaped_exceptions();
  bool ran = false;
  spawn_detached(io, returns(&ran), "returns");
  spawn_detached(io, throws(), "throws");
  io.run();
  EXPECT_TRUE(ran);
  EXPECT_EQ(escaped_exceptions(), before + 1);
}

}  // namespace
}  // namespace yurthub::net
