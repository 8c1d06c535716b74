// Asio recycles the memory of a small GET's coroutine frames and operations (hub/ proxy path):
// in steady state a request allocates none of it anew. Asio keeps freed blocks of up to 1020
// bytes per thread (BOOST_ASIO_RECYCLING_ALLOCATOR_CACHE_SIZE of them per purpose, set in the
// top-level CMakeLists.txt); a coroutine frame that grows past 1020 bytes, or more frames alive
// at once than the cache holds, costs an aligned_alloc and a free on every request
// (docs/benchmarks.md, "Coroutine frames"). That shows in no other test, only in the callgrind
// count; this one counts the worker thread's aligned_alloc calls, which is how Asio allocates
// such blocks (asio/detail/memory.hpp aligned_new).
#include <dlfcn.h>

#include <atomic>
#include <cstddef>

#include "test/hub/proxy_fixture.h"

namespace {

thread_local bool counting_this_thread = false;
std::atomic<int> aligned_allocs{0};

}  // namespace

// Interposes the C library's aligned_alloc for this test binary: counts the calls made on a
// thread that asked to be counted, and forwards every call to the next definition (libc's, or a
// sanitizer's).
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  using AlignedAlloc = void* (*)(std::size_t, std::size_t);
  static const auto next = reinterpret_cast<AlignedAlloc>(dlsym(RTLD_NEXT, "aligned_alloc"));
  if (counting_this_thread) aligned_allocs.fetch_add(1, std::memory_order_relaxed);
  return next(alignment, size);
}

namespace yurthub::hub::proxy_fixture {
namespace {

const std::string kSmallAnswer =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

class FrameRecyclingTest : public ProxyTest {
 protected:
  // Runs on the worker thread: from now on its aligned_alloc calls are counted.
  void count_worker_allocations() {
    std::atomic<bool> done{false};
    asio::post(worker_->io(), [&done] {
      counting_this_thread = true;
      done = true;
    });
    ASSERT_TRUE(eventually([&] { return done.load(); }));
  }
};

TEST_F(FrameRecyclingTest, ASmallGetAllocatesNoFrameOrOperationInSteadyState) {
  start([](const Received&) { return std::vector<Step>{write(kSmallAnswer)}; });
  count_worker_allocations();
  Client c = client();
  auto get = [&c] {
    c.get("/api/v1/namespaces/default/pods/web-0");
    const auto response = c.response();
    EXPECT_EQ(response.result_int(), 200u);
    EXPECT_EQ(response.body(), "{}");
  };
  for (int i = 0; i < 20; ++i) get();  // warm-up: the cache fills with the sizes in use
  const int before = aligned_allocs.load();
  constexpr int kRequests = 200;
  for (int i = 0; i < kRequests; ++i) get();
  // A frame past 1020 bytes allocates on every request (200 here); a handful may come from
  // the cache's slots settling.
  EXPECT_LT(aligned_allocs.load() - before, kRequests / 20)
      << "a coroutine frame or operation of the request path is not recycled";
  EXPECT_GT(before, 0) << "nothing was counted: is aligned_alloc still how Asio allocates?";
}

}  // namespace
}  // namespace yurthub::hub::proxy_fixture
