// Decoding, framing, filtering and tapping a relayed body; see body_transform.h.
#include "hub/body_transform.h"

#include "base/log.h"

namespace yurthub::hub {

BodyTransform::BodyTransform(ResponseTap* tap, ResponseFilter* filter, bool gzip, bool watch)
    : tap_(tap), filter_(filter) {
  if ((tap_ || filter_) && gzip) gzip_.emplace();
  if ((tap_ || filter_) && watch) watch_.emplace();
}

bool BodyTransform::feed(std::string_view piece) {
  out_.clear();
  if (broken_) return !filter_;
  if (!tap_ && !filter_) return true;
  std::string_view plain = piece;
  if (gzip_) {
    decoded_.clear();
    if (Status s = gzip_->feed(piece, decoded_); !s)
      return fail("cannot decompress: " + s.error().message);
    plain = decoded_;
  }
  if (watch_) return feed_events(plain);
  if (!filter_) {
    tap_->body(plain);
    return true;
  }
  if (Status s = filter_->feed(plain, &out_); !s) return fail(s.error().message);
  if (tap_ && !out_.empty()) tap_->body(out_);
  return true;
}

bool BodyTransform::feed_events(std::string_view plain) {
  const Status framed = watch_->feed(plain, [this](std::string_view raw) { on_event(raw); });
  if (tap_) tap_->events_done();
  if (framed) return true;
  const std::string& why = framed.error().message;
  if (filter_) filter_->unframeable(why);
  if (tap_) tap_->unframeable(why);
  return fail(why);
}

void BodyTransform::on_event(std::string_view raw) {
  if (!filter_) {
    tap_->event(raw);
    return;
  }
  const std::size_t before = out_.size();
  filter_->event(raw, &out_);
  if (!tap_ || out_.size() == before) return;
  std::string_view sent = std::string_view(out_).substr(before);
  if (sent.back() == '\n') sent.remove_suffix(1);
  tap_->event(sent);
}

bool BodyTransform::correct(std::string* corrections) {
  const std::size_t before = corrections->size();
  if (!filter_->correct(corrections)) return false;
  if (!tap_ || broken_) return true;
  // One compact event per line (ResponseFilter::correct).
  std::string_view events = std::string_view(*corrections).substr(before);
  while (!events.empty()) {
    const std::size_t newline = events.find('\n');
    const std::string_view event = events.substr(0, newline);
    if (!event.empty()) tap_->event(event);
    events.remove_prefix(newline == std::string_view::npos ? events.size() : newline + 1);
  }
  tap_->events_done();
  return true;
}

bool BodyTransform::finish() {
  if (!filter_ || broken_) return !broken_ || !filter_;
  if (gzip_ && !gzip_->done()) return fail("the gzip stream ended early");
  const std::size_t before = out_.size();
  if (Status s = filter_->finish(&out_); !s) return fail(s.error().message);
  if (tap_ && !watch_ && out_.size() > before) tap_->body(std::string_view(out_).substr(before));
  return true;
}

void BodyTransform::end(bool complete) {
  if (tap_) tap_->end(complete && !broken_ && (!gzip_ || gzip_->done()));
}

bool BodyTransform::fail(std::string why) {
  YH_LOG(Warning) << (filter_ ? "filters" : "cache") << ": a response cannot be read: " << why;
  error_ = std::move(why);
  broken_ = true;
  return !filter_;
}

}  // namespace yurthub::hub
