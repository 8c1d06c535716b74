// GzipDecoder: streaming gzip (RFC 1952) decompression with zlib, for responses the
// hub must read (cache, filters) when the apiserver compressed them (kube-apiserver gzips large
// responses for clients that send Accept-Encoding: gzip, as Go clients do). The client still gets
// the bytes the apiserver sent; the decoded copy is for the hub. One decoder per response.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::base {

class GzipDecoder {
 public:
  // `max_output_bytes` bounds the total decompressed size (a decompression bomb is an error).
  explicit GzipDecoder(std::size_t max_output_bytes = std::size_t{4} << 30);
  ~GzipDecoder();
  // Movable; a moved-from decoder may only be destroyed or assigned to.
  GzipDecoder(GzipDecoder&&) noexcept;
  GzipDecoder& operator=(GzipDecoder&&) noexcept;
  // Feeds compressed bytes (any split); appends what they decompress to `out`. Errors: a bad
  // header, corrupt deflate data, a CRC-32 or length mismatch in the trailer, data after the
  // trailer (concatenated members are not supported; the apiserver never sends them), or the
  // output bound. After an error every later feed fails too.
  Status feed(std::string_view in, std::string& out);
  // The trailer was read and verified.
  bool done() const;

 private:
  // zlib's stream state (which points into itself, so it cannot be moved) lives behind one
  // allocation; this also keeps zlib.h out of every file that includes this one.
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace yurthub::base
