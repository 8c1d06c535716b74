// Test and benchmark support: feeds a watch stream to a filter or a cache tap the way the hub does
// (hub/body_transform.cc): in pieces of a fixed size, framed once into whole events. Used by the
// filter chain and cache tests and by the filter and cache benchmarks.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "base/json_frames.h"

namespace yurthub::test_support {

// Calls `on_event(raw)` for every event of `stream`, and `after_piece()` (if given) after each
// piece of `piece_bytes`. Returns false if the stream cannot be framed.
inline bool for_each_watch_event(std::string_view stream, std::size_t piece_bytes,
                                 const std::function<void(std::string_view)>& on_event,
                                 const std::function<void()>& after_piece = {}) {
  base::WatchFramer framer;
  for (std::size_t at = 0; at < stream.size(); at += piece_bytes) {
    if (!framer.feed(stream.substr(at, piece_bytes), on_event)) return false;
    if (after_piece) after_piece();
  }
  return true;
}

}  // namespace yurthub::test_support
