// net::HeaderArena: the memory the fields of one relayed message head live in. The proxy session
// keeps one for the request it reads and the forwarder one for the apiserver's response; each
// hands a fresh allocator to the next parser (hub/exchange.h RequestParser, ResponseParser).
//
// Why: Beast stores every field as its own heap element, about ten per small GET between the
// two heads, each a malloc and a free (about 1.4k instructions per request, callgrind,
// docs/benchmarks.md). Here they are bumps in a buffer the arena owns, dropped all at once when
// the next message starts. A head bigger than the buffer spills into heap blocks, released the
// same way; the parsers' header limits bound how much one head can take.
#pragma once

#include <array>
#include <cstddef>
#include <memory_resource>

#include <boost/beast/http/fields.hpp>

namespace yurthub::net {

using ArenaAllocator = std::pmr::polymorphic_allocator<char>;
using ArenaFields = boost::beast::http::basic_fields<ArenaAllocator>;

class HeaderArena {
 public:
  // Room for a typical head (a kubelet request: about 600 bytes; an apiserver response: 750).
  static constexpr std::size_t kInlineBytes = 2048;

  // `upstream`: where a head bigger than the inline buffer spills (tests count it).
  explicit HeaderArena(std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : resource_(inline_.data(), inline_.size(), upstream) {}
  HeaderArena(const HeaderArena&) = delete;
  HeaderArena& operator=(const HeaderArena&) = delete;

  // Frees what the previous message took and returns the allocator for the next one.
  // REQUIRES: nothing allocated from this arena is still alive (the previous parser is gone).
  ArenaAllocator fresh() {
    resource_.release();
    return ArenaAllocator(&resource_);
  }

 private:
  alignas(std::max_align_t) std::array<std::byte, kInlineBytes> inline_{};
  std::pmr::monotonic_buffer_resource resource_;
};

}  // namespace yurthub::net
