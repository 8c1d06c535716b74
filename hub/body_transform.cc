// Decoding, filtering and tapping a relayed body; see body_transform.h.
#include "hub/body_transform.h"

#include "base/log.h"

namespace yurthub::hub {

BodyTransform::BodyTransform(ResponseTap* tap, ResponseFilter* filter, bool gzip)
    : tap_(tap), filter_(filter) {
  if ((tap_ || filter_) && gzip) gzip_.emplace();
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
  if (!filter_) {
    tap_->body(plain);
    return true;
  }
  if (Status s = filter_->feed(plain, &out_); !s) return fail(s.error().message);
  if (tap_ && !out_.empty()) tap_->body(out_);
  return true;
}

bool BodyTransform::finish() {
  if (!filter_ || broken_) return !broken_ || !filter_;
  if (gzip_ && !gzip_->done()) return fail("the gzip stream ended early");
  const std::size_t before = out_.size();
  if (Status s = filter_->finish(&out_); !s) return fail(s.error().message);
  if (tap_ && out_.size() > before) tap_->body(std::string_view(out_).substr(before));
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
