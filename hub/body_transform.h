// BodyTransform: where a relayed response body goes besides the client. Each piece is decoded if
// the apiserver gzipped it, run through the response filter (whose output then replaces the
// piece for the client) and handed to the cache's tap (which gets what the client gets, so the
// cache holds what this component was served). A watch is framed here, once, into events that
// the filter and the tap share; a get or a list goes to them as bytes. A piece the tap cannot get
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

namespace yurthub::hub {

class BodyTransform {
 public:
  // `tap` and `filter` may be null; `gzip`: the body is gzip-encoded (decoded for them);
  // `watch`: the body is a watch stream (framed here into events).
  BodyTransform(ResponseTap* tap, ResponseFilter* filter, bool gzip, bool watch = false);

  // The next piece of the body. False when the filter cannot go on (bad gzip, malformed JSON):
  // the response must be cut. out() is then what the client gets of it when filtered.
  bool feed(std::string_view piece);
  // The body is complete: appends the filter's last output (a get's whole object) to out().
  bool finish();
  // A filtered watch's corrections (ResponseFilter::correct): appends them to *events for the
  // client, and the tap gets them as it gets the events of the stream. False when the filter
  // cannot correct (the client must re-list). REQUIRES: a filter.
  bool correct(std::string* events);
  std::string& out() { return out_; }
  const std::string& error() const { return error_; }
  // The response ended: ends the tap, as complete only if the whole body reached it.
  void end(bool complete);
  // The cache failed a write for this response (the client must re-list).
  bool failed() const { return tap_ && tap_->failed(); }

 private:
  bool feed_events(std::string_view plain);
  void on_event(std::string_view raw);
  bool fail(std::string why);

  ResponseTap* tap_;
  ResponseFilter* filter_;
  std::optional<base::GzipDecoder> gzip_;
  std::optional<base::WatchFramer> watch_;
  std::string decoded_;
  std::string out_;
  std::string error_;
  bool broken_ = false;
};

}  // namespace yurthub::hub
