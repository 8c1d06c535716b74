// HeaderArena: a parser whose fields live in the arena reads heads as Beast's heap fields do; a
// typical head stays in the inline buffer; a big one spills to the upstream resource and gives
// it all back when the next head starts.
#include "net/header_arena.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>

namespace yurthub::net {
namespace {

namespace http = boost::beast::http;
using Parser = http::request_parser<http::empty_body, ArenaAllocator>;

// Counts what passes through to the heap.
class CountingResource : public std::pmr::memory_resource {
 public:
  std::size_t live = 0;
  std::size_t allocations = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    ++allocations;
    live += bytes;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    live -= bytes;
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }
};

std::string kubelet_get(std::size_t extra_header_bytes = 0) {
  std::string head =
      "GET /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\n"
      "Host: 127.0.0.1:10261\r\n"
      "User-Agent: kubelet/v1.26.0 (linux/amd64) kubernetes/b46a3f8\r\n"
      "Accept: application/vnd.kubernetes.protobuf,application/json\r\n"
      "Accept-Encoding: gzip\r\n";
  if (extra_header_bytes) head += "X-Padding: " + std::string(extra_header_bytes, 'p') + "\r\n";
  return head + "\r\n";
}

void parse(Parser& parser, const std::string& head) {
  boost::system::error_code ec;
  parser.eager(true);
  parser.put(boost::asio::buffer(head), ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(parser.is_done());
}

TEST(HeaderArena, ATypicalHeadStaysInTheInlineBuffer) {
  CountingResource heap;
  HeaderArena arena(&heap);
  for (int request = 0; request < 100; ++request) {
    Parser parser(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()});
    parse(parser, kubelet_get());
    parser.get().set(http::field::host, "10.0.0.1:6443");  // as the forwarder does
    EXPECT_EQ(parser.get()[http::field::accept_encoding], "gzip");
    EXPECT_EQ(parser.get().target(), "/api/v1/namespaces/default/pods/web-0");
  }
  EXPECT_EQ(heap.allocations, 0u);
}

TEST(HeaderArena, ABigHeadSpillsAndTheNextHeadGivesItBack) {
  CountingResource heap;
  HeaderArena arena(&heap);
  {
    Parser parser(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()});
    parser.header_limit(64 * 1024);
    parse(parser, kubelet_get(20 * 1024));
    EXPECT_EQ(parser.get()["X-Padding"].size(), 20u * 1024);
    EXPECT_GT(heap.live, 20u * 1024);
  }
  Parser next(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()});
  EXPECT_EQ(heap.live, 0u);
  parse(next, kubelet_get());
  EXPECT_EQ(next.get()[http::field::user_agent],
            "kubelet/v1.26.0 (linux/amd64) kubernetes/b46a3f8");
}

}  // namespace
}  // namespace yurthub::net
