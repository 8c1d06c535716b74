// FilterStatus: what a response filter's answer asks of the relay, so the relay switches on it
// (as Envoy's filters return a FilterDataStatus) instead of reading "hold" from an empty piece and
// an error from a side flag. Returned by ResponseFilter (hub/hooks/filter_hooks.h, implemented by
// filters/filter_chain.cc) and by the hub's BodyTransform, which adds what decoding and framing
// the body can say; switched on by ResponseRelay, watch_corrections.h and FilteringWriter.
#pragma once

#include <optional>
#include <string_view>

#include "hub/hooks/stream_end.h"

namespace yurthub::hub {

enum class [[nodiscard]] FilterStatus{
    // Bytes for the client now: what the call appended to its output goes out at once. From
    // finish(), possibly nothing: the body is complete, and its end goes out.
    Send,
    // Nothing for the client yet; the relay reads on. The filter keeps what it was fed until it
    // can frame it (a get's object until finish(), a list item or watch event straddling pieces),
    // or left it all out (a dropped event); from correct(), nothing needed correcting.
    Hold,
    // The filter no longer knows what the client was sent (correct(): too many objects to keep
    // them): the client must re-list. The relay ends the watch with a 410 Expired event.
    Relist,
    // The body cannot be filtered (malformed JSON, an object over the size bound, bad gzip): what
    // follows cannot be framed, so the response is cut short (no last chunk) and the client
    // cannot mistake it for a complete one. Whole watch events framed before the break were
    // appended and still go out. ResponseFilter::cut_reason() (BodyTransform::error()) says why.
    Cut,
};

// How a status ends a stream: Cut with FilterError (cut short), Relist with FilterRelist (a 410
// event); Send and Hold go on. A plain function, so the coroutines that act on a status switch on
// nothing themselves (g++ 12 has laid a coroutine's frame out wrong around a co_return in a
// condition: hub/filtering_writer.h).
constexpr std::optional<StreamEnd> stream_end_of(FilterStatus status) {
  switch (status) {
    case FilterStatus::Cut:
      return StreamEnd::FilterError;
    case FilterStatus::Relist:
      return StreamEnd::FilterRelist;
    case FilterStatus::Send:
    case FilterStatus::Hold:
      return std::nullopt;
  }
  return StreamEnd::FilterError;
}

// For logs and test messages.
constexpr std::string_view filter_status_name(FilterStatus status) {
  switch (status) {
    case FilterStatus::Send:
      return "send";
    case FilterStatus::Hold:
      return "hold";
    case FilterStatus::Relist:
      return "relist";
    case FilterStatus::Cut:
      return "cut";
  }
  return "unknown";
}

}  // namespace yurthub::hub
