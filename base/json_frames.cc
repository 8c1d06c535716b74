// ListFramer and WatchFramer: one pass over the bytes with a small state machine (nesting stack,
// string/escape state) that finds where each list member, list item or watch event ends. A value
// that lies within one feed() call is handed out as a view into the caller's bytes; only a value
// that spans calls is copied, and only its own bytes. Called by the cache's response tap and the
// filter chain on the session's strand.
#include "base/json_frames.h"

#include <array>

#include "base/json_string_run.h"

namespace yurthub::base {
namespace {

// Go's encoding/json stops at the same depth; Kubernetes objects nest a few dozen levels.
constexpr std::size_t kMaxDepth = 10000;
// A buffer grown past this by one large value is released rather than kept for the stream's life.
constexpr std::size_t kKeptBufferBytes = 256 * 1024;

enum CharClass : std::uint8_t {
  kScalarStart = 1,  // may start a number or literal
  kScalarPart = 2,   // may continue a number or literal
  kHexDigit = 4,
  kEscaped = 8,  // may follow a backslash in a string
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] |= kScalarStart | kScalarPart | kHexDigit;
  for (int c = 'a'; c <= 'z'; ++c) t[c] |= kScalarPart;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] |= kScalarPart;
  for (int c = 'a'; c <= 'f'; ++c) t[c] |= kHexDigit;
  for (int c = 'A'; c <= 'F'; ++c) t[c] |= kHexDigit;
  for (char c : {'-', 't', 'f', 'n'}) t[static_cast<unsigned char>(c)] |= kScalarStart;
  for (char c : {'-', '+', '.'}) t[static_cast<unsigned char>(c)] |= kScalarPart;
  for (char c : {'"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u'}) {
    t[static_cast<unsigned char>(c)] |= kEscaped;
  }
  return t;
}
constexpr std::array<std::uint8_t, 256> kClasses = make_classes();

bool has(char c, CharClass k) { return (kClasses[static_cast<unsigned char>(c)] & k) != 0; }
bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

unsigned hex4(const char* p) {
  unsigned v = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = p[k];
    v = v * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

void append_utf8(unsigned cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes a member name the scanner has already validated (quotes included), so `"\u0069tems"`
// is recognised as "items" as any JSON parser would. A lone surrogate becomes U+FFFD, as in Go.
void decode_key(std::string_view quoted, std::string* out) {
  const std::string_view s = quoted.substr(1, quoted.size() - 2);
  out->clear();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out->push_back(s[i]);
      continue;
    }
    const char e = s[++i];
    if (e != 'u') {
      constexpr std::string_view kFrom = "bfnrt", kTo = "\b\f\n\r\t";
      const std::size_t k = kFrom.find(e);
      out->push_back(k == std::string_view::npos ? e : kTo[k]);
      continue;
    }
    unsigned cp = hex4(&s[i + 1]);
    i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u') {
      const unsigned low = hex4(&s[i + 3]);
      if (low >= 0xDC00 && low < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        i += 6;
      }
    }
    if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
    append_utf8(cp, out);
  }
}

}  // namespace

namespace detail {

using Step = ValueScanner::Step;

// The per-byte helpers below are forced inline into scan(): as calls they cost a quarter of the
// throughput (measured on a 20 MB pod list, Release).

void ValueScanner::begin() {
  if (buffer_.capacity() > kKeptBufferBytes) {
    std::string().swap(buffer_);
  } else {
    buffer_.clear();
  }
  stack_.clear();
  state_ = State::kValue;
  string_is_key_ = false;
  hex_left_ = 0;
}

Step ValueScanner::scan(std::string_view in, std::size_t* pos, std::string_view* value,
                        const char** reason) {
  const char* p = in.data();
  const std::size_t n = in.size();
  const std::size_t seg = *pos;  // where this call's part of the value starts
  std::size_t i = seg;
  Step step = Step::kNeedMore;  // kNeedMore inside the loop: keep scanning
  while (i < n && step == Step::kNeedMore) {
    switch (state_) {
      case State::kString:
        // The hot loop: most bytes of a Kubernetes object are inside strings, and a
        // last-applied-configuration annotation is full of \" escapes, skipped here in place.
        for (;;) {
          i = skip_string_run(p, i, n);
          if (i < n && p[i] == '\\') {
            // From its first escape a string is read in blocks (json_string_run.h).
            if (const std::size_t past = skip_escaped_blocks(p, i, n); past != i) {
              i = past;
              continue;
            }
          }
          if (i + 1 < n && p[i] == '\\' && p[i + 1] != 'u' && has(p[i + 1], kEscaped)) {
            i += 2;
            continue;
          }
          if (i < n) step = string_stop(p[i], &i, reason);
          break;
        }
        break;
      case State::kEscape:
        step = escape(p[i], &i, reason);
        break;
      case State::kUnicode:
        if (!has(p[i], kHexDigit)) {
          *reason = "bad \\u escape";
          step = Step::kError;
          break;
        }
        ++i;
        if (--hex_left_ == 0) state_ = State::kString;
        break;
      case State::kScalar:
        while (i < n && has(p[i], kScalarPart)) ++i;
        if (i < n) step = after_value();  // the delimiter belongs to what follows
        break;
      default:
        step = structural(p[i], &i, reason);
    }
  }
  return finish(in, seg, i, step, pos, value, reason);
}

Step ValueScanner::finish(std::string_view in, std::size_t seg, std::size_t end, Step step,
                          std::size_t* pos, std::string_view* value, const char** reason) {
  *pos = end;
  if (step == Step::kError) return step;
  const std::size_t len = end - seg;
  if (buffer_.size() + len > max_bytes_) {
    *reason = "value larger than the size bound";
    return Step::kError;
  }
  if (step == Step::kComplete && buffer_.empty()) {
    *value = in.substr(seg, len);  // the common case: no copy
    return step;
  }
  buffer_.append(in.data() + seg, len);
  if (step == Step::kComplete) *value = buffer_;
  return step;
}

[[gnu::always_inline]] inline Step ValueScanner::string_stop(char c, std::size_t* i,
                                                             const char** reason) {
  if (c == '\\') {
    ++*i;
    state_ = State::kEscape;
    return Step::kNeedMore;
  }
  if (c != '"') {
    *reason = "control character in a string";
    return Step::kError;
  }
  ++*i;
  if (string_is_key_) {
    string_is_key_ = false;
    state_ = State::kColon;
    return Step::kNeedMore;
  }
  return after_value();
}

Step ValueScanner::escape(char c, std::size_t* i, const char** reason) {
  if (!has(c, kEscaped)) {
    *reason = "bad escape in a string";
    return Step::kError;
  }
  ++*i;
  if (c == 'u') {
    state_ = State::kUnicode;
    hex_left_ = 4;
  } else {
    state_ = State::kString;
  }
  return Step::kNeedMore;
}

[[gnu::always_inline]] inline Step ValueScanner::structural(char c, std::size_t* i,
                                                            const char** reason) {
  if (is_ws(c)) {
    ++*i;
    return Step::kNeedMore;
  }
  switch (state_) {
    case State::kValueOrClose:
      if (c == ']') return close(c, i, reason);
      [[fallthrough]];
    case State::kValue:
      return open_value(c, i, reason);
    case State::kKeyOrClose:
      if (c == '}') return close(c, i, reason);
      [[fallthrough]];
    case State::kKey:
      if (c != '"') break;
      ++*i;
      state_ = State::kString;
      string_is_key_ = true;
      return Step::kNeedMore;
    case State::kColon:
      if (c != ':') break;
      ++*i;
      state_ = State::kValue;
      return Step::kNeedMore;
    case State::kCommaOrClose:
      if (c == '}' || c == ']') return close(c, i, reason);
      if (c != ',') break;
      ++*i;
      state_ = stack_.back() == '{' ? State::kKey : State::kValue;
      return Step::kNeedMore;
    default:
      break;
  }
  *reason = state_ == State::kColon          ? "expected ':'"
            : state_ == State::kCommaOrClose ? "expected ',' or a closing bracket"
                                             : "expected a member name";
  return Step::kError;
}

[[gnu::always_inline]] inline Step ValueScanner::open_value(char c, std::size_t* i,
                                                            const char** reason) {
  if (c == '{' || c == '[') {
    if (stack_.size() >= kMaxDepth) {
      *reason = "nested too deeply";
      return Step::kError;
    }
    stack_.push_back(c);
    state_ = c == '{' ? State::kKeyOrClose : State::kValueOrClose;
  } else if (c == '"') {
    state_ = State::kString;
  } else if (has(c, kScalarStart)) {
    state_ = State::kScalar;
  } else {
    *reason = "expected a value";
    return Step::kError;
  }
  ++*i;
  return Step::kNeedMore;
}

[[gnu::always_inline]] inline Step ValueScanner::close(char c, std::size_t* i,
                                                       const char** reason) {
  if (stack_.back() != (c == '}' ? '{' : '[')) {
    *reason = "mismatched closing bracket";
    return Step::kError;
  }
  ++*i;
  stack_.pop_back();
  return after_value();
}

[[gnu::always_inline]] inline Step ValueScanner::after_value() {
  if (stack_.empty()) return Step::kComplete;
  state_ = State::kCommaOrClose;
  return Step::kNeedMore;
}

}  // namespace detail

using detail::ValueScanner;

// ---- ListFramer ----

ListFramer::ListFramer(ListSink& sink, std::size_t max_value_bytes)
    : sink_(sink), scanner_(max_value_bytes) {}

bool ListFramer::done() const { return state_ == State::kDone; }

Status ListFramer::fail(const char* reason, std::size_t pos) {
  error_ = std::string("list framing: ") + reason + " at byte " + std::to_string(offset_ + pos);
  state_ = State::kFailed;
  return make_error(error_);
}

Status ListFramer::feed(std::string_view bytes) {
  if (state_ == State::kFailed) return make_error(error_);
  std::size_t pos = 0;
  const char* reason = nullptr;
  while (pos < bytes.size()) {
    if (state_ == State::kInKey || state_ == State::kInValue || state_ == State::kItemsNull ||
        state_ == State::kInItem) {
      std::string_view value;
      const ValueScanner::Step step = scanner_.scan(bytes, &pos, &value, &reason);
      if (step == ValueScanner::Step::kError) return fail(reason, pos);
      if (step == ValueScanner::Step::kComplete && !scanned(value, &reason)) {
        return fail(reason, pos);
      }
      continue;
    }
    const char c = bytes[pos];
    if (is_ws(c)) {
      ++pos;
      continue;
    }
    if (!structural(c, &pos, &reason)) return fail(reason, pos);
  }
  offset_ += bytes.size();
  return {};
}

// One byte outside any scanned value. A byte that starts a value is left for the scanner.
bool ListFramer::structural(char c, std::size_t* pos, const char** reason) {
  switch (state_) {
    case State::kStart:
      if (c != '{') return (*reason = "the body is not a JSON object", false);
      state_ = State::kKeyOrEnd;
      break;
    case State::kKeyOrEnd:
    case State::kAfterMember:
      if (c == '}') {
        state_ = State::kDone;
        sink_.end();
      } else if (state_ == State::kAfterMember) {
        if (c != ',') return (*reason = "expected ',' or '}' after a member", false);
        state_ = State::kKey;
      } else {
        return start_key(c, reason);
      }
      break;
    case State::kKey:
      return start_key(c, reason);
    case State::kColon:
      if (c != ':') return (*reason = "expected ':'", false);
      state_ = State::kBeforeValue;
      break;
    case State::kBeforeValue:
      return start_value(c, pos, reason);
    case State::kItemOrEnd:
    case State::kAfterItem:
      if (c == ']') {
        sink_.items_end();
        state_ = State::kAfterMember;
      } else if (state_ == State::kAfterItem) {
        if (c != ',') return (*reason = "expected ',' or ']' after an item", false);
        state_ = State::kItem;
      } else {
        return start_item();
      }
      break;
    case State::kItem:
      return start_item();
    default:  // kDone
      return (*reason = "data after the end of the list", false);
  }
  ++*pos;
  return true;
}

bool ListFramer::start_key(char c, const char** reason) {
  if (c != '"') return (*reason = "expected a member name", false);
  scanner_.begin();
  state_ = State::kInKey;
  return true;
}

bool ListFramer::start_item() {
  scanner_.begin();  // the scanner rejects what cannot start a value (e.g. "[1,]")
  state_ = State::kInItem;
  return true;
}

bool ListFramer::start_value(char c, std::size_t* pos, const char** reason) {
  if (key_ != "items") {
    scanner_.begin();
    state_ = State::kInValue;
    return true;
  }
  if (items_seen_) return (*reason = "a second \"items\" member", false);
  items_seen_ = true;
  if (c == '[') {
    sink_.items_begin();
    state_ = State::kItemOrEnd;
    ++*pos;
    return true;
  }
  if (c != 'n') return (*reason = "\"items\" is neither an array nor null", false);
  scanner_.begin();
  state_ = State::kItemsNull;
  return true;
}

bool ListFramer::scanned(std::string_view value, const char** reason) {
  switch (state_) {
    case State::kInKey:
      decode_key(value, &key_);
      state_ = State::kColon;
      break;
    case State::kInValue:
      sink_.member(key_, value);
      state_ = State::kAfterMember;
      break;
    case State::kItemsNull:
      // Go clients decode "items":null as an empty list; the sink sees exactly that.
      if (value != "null") return (*reason = "\"items\" is neither an array nor null", false);
      sink_.items_begin();
      sink_.items_end();
      state_ = State::kAfterMember;
      break;
    default:  // kInItem
      sink_.item(value);
      state_ = State::kAfterItem;
  }
  return true;
}

// ---- WatchFramer ----

WatchFramer::WatchFramer(std::size_t max_value_bytes) : scanner_(max_value_bytes) {}

Status WatchFramer::feed(std::string_view bytes,
                         const std::function<void(std::string_view raw)>& on_event) {
  if (!error_.empty()) return make_error(error_);
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (!in_value_) {
      if (is_ws(bytes[pos])) {
        ++pos;
        continue;
      }
      scanner_.begin();
      in_value_ = true;
    }
    std::string_view value;
    const char* reason = nullptr;
    switch (scanner_.scan(bytes, &pos, &value, &reason)) {
      case ValueScanner::Step::kError:
        error_ =
            std::string("watch framing: ") + reason + " at byte " + std::to_string(offset_ + pos);
        return make_error(error_);
      case ValueScanner::Step::kComplete:
        in_value_ = false;
        on_event(value);
        break;
      case ValueScanner::Step::kNeedMore:
        break;
    }
  }
  offset_ += bytes.size();
  return {};
}

namespace {

class EventMembers final : public ListSink {
 public:
  explicit EventMembers(WatchEventParts& parts) : parts_(parts) {}
  void member(std::string_view key, std::string_view raw) override {
    if (key == "type") {
      const bool quoted = raw.size() >= 2 && raw.front() == '"' && raw.back() == '"';
      parts_.type.assign(quoted ? raw.substr(1, raw.size() - 2) : raw);
    } else if (key == "object") {
      parts_.object.assign(raw);
    }
  }
  void items_begin() override {}
  void item(std::string_view) override {}
  void items_end() override {}
  void end() override {}

 private:
  WatchEventParts& parts_;
};

}  // namespace

std::optional<WatchEventParts> split_watch_event(std::string_view raw) {
  WatchEventParts parts;
  EventMembers sink(parts);
  ListFramer members(sink);
  if (Status s = members.feed(raw); !s || !members.done()) return std::nullopt;
  return parts;
}

}  // namespace yurthub::base
