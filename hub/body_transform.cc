// Decoding, framing, filtering and tapping a relayed body; see body_transform.h.
#include "hub/body_transform.h"

#include "base/log.h"

namespace yurthub::hub {

BodyTransform::BodyTransform(ResponseTap* tap, ResponseFilter* filter, bool gzip, bool watch)
    : tap_(tap), filter_(filter) {
  if ((tap_ || filter_) && gzip) gzip_.emplace();
  if ((tap_ || filter_) && watch) watch_.emplace();
  // A list the filter frames reaches the tap framed, not as bytes to frame a second time.
  if (tap_ && filter_ && !watch) {
    base::ListSink* sink = tap_->list_sink();
    tap_framed_ = sink && filter_->echo_list(sink);
  }
}

FilterStatus BodyTransform::feed(std::string_view piece) {
  out_.clear();
  if (!filter_) {
    if (tap_ && !broken_) tap_unfiltered(piece);
    return piece.empty() ? FilterStatus::Hold : FilterStatus::Send;
  }
  if (broken_) return FilterStatus::Cut;  // nothing after a break can be framed
  std::string_view plain = piece;
  if (!decode(piece, &plain)) return FilterStatus::Cut;
  if (watch_) return feed_events(plain);
  const FilterStatus status = filter_->feed(plain, &out_);
  if (status == FilterStatus::Cut) return fail(std::string(filter_->cut_reason()));
  if (status == FilterStatus::Send && tap_ && !tap_framed_) tap_->body(out_);
  return status;
}

bool BodyTransform::decode(std::string_view piece, std::string_view* plain) {
  if (!gzip_) return true;
  decoded_.clear();
  if (Status s = gzip_->feed(piece, decoded_); !s) {
    (void)fail("cannot decompress: " + s.error().message);
    return false;
  }
  *plain = decoded_;
  return true;
}

void BodyTransform::tap_unfiltered(std::string_view piece) {
  std::string_view plain = piece;
  if (!decode(piece, &plain)) return;  // the tap ends incomplete; the client is not affected
  if (watch_) {
    (void)feed_events(plain);  // the client gets the piece as relayed, whatever the tap makes of it
    return;
  }
  tap_->body(plain);
}

FilterStatus BodyTransform::feed_events(std::string_view plain) {
  bool sent = false;
  const Status framed =
      watch_->feed(plain, [this, &sent](std::string_view raw) { sent = on_event(raw) || sent; });
  if (tap_) tap_->events_done();
  if (!framed) {
    const std::string& why = framed.error().message;
    if (filter_) filter_->unframeable(why);
    if (tap_) tap_->unframeable(why);
    return fail(why);
  }
  return sent ? FilterStatus::Send : FilterStatus::Hold;
}

bool BodyTransform::on_event(std::string_view raw) {
  if (!filter_) {
    tap_->event(raw);
    return true;
  }
  const std::size_t before = out_.size();
  // An event is sent (Send) or left out (Hold); a filter cuts only what it cannot frame.
  if (filter_->event(raw, &out_) != FilterStatus::Send || out_.size() == before) return false;
  if (!tap_) return true;
  std::string_view sent = std::string_view(out_).substr(before);
  if (sent.back() == '\n') sent.remove_suffix(1);
  tap_->event(sent);
  return true;
}

FilterStatus BodyTransform::correct(std::string* corrections) {
  const std::size_t before = corrections->size();
  const FilterStatus status = filter_->correct(corrections);
  if (status == FilterStatus::Relist || !tap_ || broken_) return status;
  // One compact event per line (ResponseFilter::correct).
  std::string_view events = std::string_view(*corrections).substr(before);
  while (!events.empty()) {
    const std::size_t newline = events.find('\n');
    const std::string_view event = events.substr(0, newline);
    if (!event.empty()) tap_->event(event);
    events.remove_prefix(newline == std::string_view::npos ? events.size() : newline + 1);
  }
  tap_->events_done();
  return status;
}

FilterStatus BodyTransform::finish() {
  if (!filter_) return FilterStatus::Send;
  if (broken_) return FilterStatus::Cut;
  if (gzip_ && !gzip_->done()) return fail("the gzip stream ended early");
  const std::size_t before = out_.size();
  if (filter_->finish(&out_) == FilterStatus::Cut) return fail(std::string(filter_->cut_reason()));
  if (tap_ && !watch_ && !tap_framed_ && out_.size() > before)
    tap_->body(std::string_view(out_).substr(before));
  return FilterStatus::Send;  // the body is complete: its end goes out, never held
}

void BodyTransform::end(bool complete) {
  if (tap_) tap_->end(complete && !broken_ && (!gzip_ || gzip_->done()));
}

FilterStatus BodyTransform::fail(std::string why) {
  YH_LOG(Warning) << (filter_ ? "filters" : "cache") << ": a response cannot be read: " << why;
  error_ = std::move(why);
  broken_ = true;
  return FilterStatus::Cut;
}

}  // namespace yurthub::hub
