// InPlaceBody; see in_place_body.h.
#include "hub/in_place_body.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace yurthub::hub {
namespace http = boost::beast::http;

boost::system::error_code InPlaceBody::parse(std::size_t enough) {
  boost::system::error_code ec;
  while (!rp_.is_done() && buffer_.size() - parsed_ >= std::max<std::size_t>(1, held_back_) &&
         piece_end_ - piece_begin_ < enough) {
    const auto data = buffer_.data();
    const auto* raw = static_cast<const char*>(data.data());
    // The parser is not eager: one put takes at most one run of body bytes, so each is seen.
    const std::size_t used =
        rp_.put(boost::asio::const_buffer(raw + parsed_, data.size() - parsed_), ec);
    parsed_ += used;
    if (used > 0) held_back_ = 0;
    std::string_view& view = rp_.get().body().view;
    if (!view.empty()) take(std::exchange(view, {}));
    if (ec == http::error::need_more) {
      // The parser holds back framing it cannot read yet. Beast 1.81's asserts (on in the fuzz
      // and sanitizer builds) want a final chunk's next bytes at least 5 at a time
      // (boostorg/beast#2861, fixed in 1.86); any end of a chunked body from here is longer.
      held_back_ = kLeastFramingBytes;
      ec = {};
      break;
    }
    if (ec || used == 0) break;
  }
  if (!ec && !rp_.is_done() && buffer_.size() - parsed_ > kMaxUnparsedBytes) {
    ec = http::error::buffer_overflow;
  }
  return ec;
}

boost::system::error_code InPlaceBody::end_of_stream() {
  boost::system::error_code ec;
  rp_.put_eof(ec);
  return ec;
}

std::string_view InPlaceBody::piece() const {
  return {static_cast<const char*>(buffer_.data().data()) + piece_begin_,
          piece_end_ - piece_begin_};
}

void InPlaceBody::release() {
  buffer_.consume(parsed_);
  parsed_ = piece_begin_ = piece_end_ = 0;
}

void InPlaceBody::take(std::string_view view) {
  auto* raw = static_cast<char*>(buffer_.data().data());
  const auto at = static_cast<std::size_t>(view.data() - raw);
  if (piece_end_ == piece_begin_) {
    piece_begin_ = at;
    piece_end_ = at + view.size();
    return;
  }
  if (at != piece_end_) std::memmove(raw + piece_end_, view.data(), view.size());  // over framing
  piece_end_ += view.size();
}

}  // namespace yurthub::hub
