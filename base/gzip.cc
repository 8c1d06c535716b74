// GzipDecoder: zlib's own gzip decoding (inflateInit2 with 16 + MAX_WBITS reads the RFC 1952
// header, optional fields and header CRC, the deflate body and the CRC-32/ISIZE trailer). This
// unit adds what zlib leaves to its caller: the output bound, refusing bytes after the member, and
// a sticky error. Called by the cache's response tap and the filter chain; one decoder per
// response.
#include "base/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace yurthub::base {
namespace {

// Output is produced in steps of this much.
constexpr std::size_t kOutputStep = 16 * 1024;

}  // namespace

struct GzipDecoder::Impl {
  z_stream zs{};
  bool initialized = false;
  bool done = false;
  std::string error;  // set once; every later feed returns it
  std::size_t max_output = 0;
  std::size_t produced = 0;

  Status fail(std::string reason) {
    error = "gzip: " + std::move(reason);
    return make_error(error);
  }
};

GzipDecoder::GzipDecoder(std::size_t max_output_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->max_output = max_output_bytes;
  // 16 + MAX_WBITS: a gzip wrapper only (not zlib, not auto-detected), with a 32 KiB window.
  if (inflateInit2(&impl_->zs, 16 + MAX_WBITS) == Z_OK) {
    impl_->initialized = true;
  } else {
    impl_->error = "gzip: zlib could not initialize (out of memory)";
  }
}

GzipDecoder::~GzipDecoder() {
  if (impl_ && impl_->initialized) inflateEnd(&impl_->zs);
}

GzipDecoder::GzipDecoder(GzipDecoder&&) noexcept = default;

GzipDecoder& GzipDecoder::operator=(GzipDecoder&& other) noexcept {
  if (this != &other) {
    if (impl_ && impl_->initialized) inflateEnd(&impl_->zs);
    impl_ = std::move(other.impl_);
  }
  return *this;
}

bool GzipDecoder::done() const { return impl_->done && impl_->error.empty(); }

Status GzipDecoder::feed(std::string_view in, std::string& out) {
  Impl& d = *impl_;
  if (!d.error.empty()) return make_error(d.error);
  if (d.done) {
    if (in.empty()) return {};
    return d.fail("data after the gzip trailer at byte " + std::to_string(d.zs.total_in));
  }
  // zlib takes non-const input but never writes to it.
  d.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  d.zs.avail_in = static_cast<uInt>(in.size());
  while (true) {
    const std::size_t room = d.max_output - d.produced;
    const std::size_t step = std::min(kOutputStep, room + 1);  // one byte past the bound shows it
    const std::size_t before = out.size();
    out.resize(before + step);
    d.zs.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    d.zs.avail_out = static_cast<uInt>(step);
    const int rc = inflate(&d.zs, Z_NO_FLUSH);
    const std::size_t made = step - d.zs.avail_out;
    out.resize(before + std::min(made, room));
    if (made > room) {
      return d.fail("decompressed size over the bound of " + std::to_string(d.max_output) +
                    " bytes");
    }
    d.produced += made;
    if (rc == Z_STREAM_END) {
      d.done = true;
      if (d.zs.avail_in > 0) {
        // A second member or trailing garbage: the apiserver never sends either.
        return d.fail("data after the gzip trailer at byte " + std::to_string(d.zs.total_in));
      }
      return {};
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
      return d.fail(std::string("corrupt data: ") + (d.zs.msg ? d.zs.msg : "invalid gzip stream"));
    }
    if (rc == Z_MEM_ERROR) return d.fail("zlib is out of memory");
    // Z_OK, or Z_BUF_ERROR (no progress possible): more output space or more input is needed.
    if (d.zs.avail_in == 0 && d.zs.avail_out > 0) return {};
  }
}

}  // namespace yurthub::base
