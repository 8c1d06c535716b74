// net::ViewBody: a Beast Body whose reader keeps a view of the body bytes the parser hands it,
// where the parser read them, instead of copying them out (Beast's buffer_body copies every byte
// into a buffer of the caller's). One view at a time: the caller takes it after each put and
// clears it; a put while a view is still held takes nothing (need_buffer, as buffer_body does
// when full). The view lives in the caller's input buffer, so it is valid until that buffer is
// written to again. Used by the response parser of the hub's relay (hub/exchange.h,
// hub/in_place_body.h).
#pragma once

#include <cstdint>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>

namespace yurthub::net {

struct ViewBody {
  struct value_type {
    std::string_view view;  // the body bytes of the last put, in the parser's input; empty if taken
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>& /*head*/, value_type& body)
        : body_(body) {}

    void init(const boost::optional<std::uint64_t>& /*length*/, boost::system::error_code& ec) {
      ec = {};
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
      if (!body_.view.empty()) {
        ec = boost::beast::http::error::need_buffer;
        return 0;
      }
      ec = {};
      // Beast's parser hands its body bytes as one buffer; of a longer sequence, the first.
      const auto first = boost::asio::buffer_sequence_begin(buffers);
      if (first == boost::asio::buffer_sequence_end(buffers)) return 0;
      const boost::asio::const_buffer bytes(*first);
      body_.view = {static_cast<const char*>(bytes.data()), bytes.size()};
      return bytes.size();
    }

    void finish(boost::system::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace yurthub::net
