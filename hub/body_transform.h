// BodyTransform: where a relayed response body goes besides the client. Each piece is decoded if
// the apiserver gzipped it, run through the response filter (whose output then replaces the
// piece for the client) and handed to the cache's tap (which gets what the client gets, so the
// cache holds what this component was served). A watch is framed here, once, into events that
// the filter and the tap share; a get goes to them as bytes, and so does a list, except that a
// tap that can take it framed gets the members and items the filter framed and sends on
// (ResponseFilter::echo_list), so a filtered list is framed once too. A piece the tap cannot get
// (bad gzip, a stream that cannot be framed) ends the tap as incomplete; unfiltered, the client
// is not affected. Owned by the ResponseRelay, one per response, as its ResponsePlan says;
// worker-thread only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/gzip.h"
#include "base/json_frames.h"
#include "hub/hooks/cache_hooks.h"
#include "hub/hooks/filter_hooks.h"
#include "hub/hooks/filter_status.h"

namespace yurthub::hub {

class BodyTransform {
 public:
  // `tap` and `filter` may be null; `gzip`: the body is gzip-encoded (decoded for them);
  // `watch`: the body is a watch stream (framed here into events).
  BodyTransform(ResponseTap* tap, ResponseFilter* filter, bool gzip, bool watch = false);

  // The next piece of the body. Filtered, out() is then what the client gets of it: Send, bytes
  // for the client now; Hold, none yet (the filter keeps them, or left them out); Cut, the body
  // cannot be filtered (bad gzip, malformed JSON, a watch that cannot be framed): the response
  // must be cut, error() says why, and out() holds the whole events framed before the break.
  // Once cut, every later piece is Cut. Unfiltered, the client gets the piece itself: Send, or
  // Hold for an empty piece; never Cut, as what the tap cannot read ends only the tap.
  FilterStatus feed(std::string_view piece);
  // The body is complete: appends the filter's last output (a get's whole object) to out().
  // Send (the body's end goes out, with whatever was appended) or Cut.
  FilterStatus finish();
  // A filtered watch's corrections (ResponseFilter::correct): appends them to *events for the
  // client, and the tap gets them as it gets the events of the stream. Send, Hold (nothing to
  // correct) or Relist (the filter cannot correct: the client must re-list). REQUIRES: a filter.
  FilterStatus correct(std::string* events);
  std::string& out() { return out_; }
  const std::string& error() const { return error_; }
  // The response ended: ends the tap, as complete only if the whole body reached it.
  void end(bool complete);
  // The cache failed a write for this response (the client must re-list). Not a FilterStatus:
  // the cache's writer thread sets it at any time, not as an answer about a piece, and the relay
  // acts on it only where it can still tell the client (a stream it has not encoded).
  bool failed() const { return tap_ && tap_->failed(); }

 private:
  // Decodes `piece` into *plain when the body is gzipped. False (after fail()) on bad gzip.
  bool decode(std::string_view piece, std::string_view* plain);
  void tap_unfiltered(std::string_view piece);
  // Frames a watch's events for the filter and the tap: Send if the client gets any of them.
  FilterStatus feed_events(std::string_view plain);
  // One event: whether the client gets something of it.
  bool on_event(std::string_view raw);
  // Logs why the body cannot be read and ends the tap as incomplete; returns Cut.
  FilterStatus fail(std::string why);

  ResponseTap* tap_;
  ResponseFilter* filter_;
  std::optional<base::GzipDecoder> gzip_;
  std::optional<base::WatchFramer> watch_;
  std::string decoded_;
  std::string out_;
  std::string error_;
  bool broken_ = false;      // fail() was called: the filter and the tap get nothing more
  bool tap_framed_ = false;  // the tap gets the list as the filter frames it, not as bytes
};

}  // namespace yurthub::hub
