// Incremental framing of Kubernetes JSON responses, so a list or a watch is handled one object at
// a time as its bytes arrive, never parsed (or held) whole. Framing only finds boundaries; it does
// not build a DOM: each complete piece is handed out as raw JSON text for the caller to parse.
// ListFramer is used by the cache's list tap and the filter chain, WatchFramer by the hub's
// BodyTransform (once per watch, for the filter chain and the cache's tap together). Not
// thread-safe; one framer per response.
//
//   ListFramer over `{"kind":"PodList","apiVersion":"v1","metadata":{...},"items":[{...},{...}]}`
//   emits, in order: member("kind", "\"PodList\""), member("apiVersion", ...),
//   member("metadata", "{...}"), items_begin(), item("{...}") per element, items_end(), then any
//   members after "items", then end().
//
//   WatchFramer over `{"type":"ADDED","object":{...}}\n{"type":"MODIFIED",...}\n` emits each
//   complete top-level JSON value (one watch event) as soon as its last byte arrives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::base {

// The largest single item or event a framer holds while it is incomplete (an etcd object is at
// most 1.5 MiB; a watch event carries one object).
inline constexpr std::size_t kMaxFramedValueBytes = 16 * 1024 * 1024;

namespace detail {

// One JSON value being framed (a member value, an item, a watch event): its nesting and string
// state, and, only while the value spans feed() calls, a copy of its bytes so far. Shared by the
// two framers below; not part of the API.
class ValueScanner {
 public:
  enum class Step { kNeedMore, kComplete, kError };

  explicit ValueScanner(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  // Starts a new value; its first byte must be the next byte scanned (not whitespace).
  void begin();
  // Scans from in[*pos]. kComplete: *value is the value's exact text (a view into `in`, or into
  // this scanner's buffer when it spanned calls; valid until begin()), *pos is just past it.
  // kNeedMore: all of `in` was consumed and saved. kError: *reason says why, *pos is where.
  Step scan(std::string_view in, std::size_t* pos, std::string_view* value, const char** reason);

 private:
  enum class State : std::uint8_t {
    kValue,
    kValueOrClose,
    kKeyOrClose,
    kKey,
    kColon,
    kCommaOrClose,
    kString,
    kEscape,
    kUnicode,
    kScalar,
  };
  Step finish(std::string_view in, std::size_t seg, std::size_t end, Step step, std::size_t* pos,
              std::string_view* value, const char** reason);
  Step string_stop(char c, std::size_t* i, const char** reason);
  Step escape(char c, std::size_t* i, const char** reason);
  Step structural(char c, std::size_t* i, const char** reason);
  Step open_value(char c, std::size_t* i, const char** reason);
  Step close(char c, std::size_t* i, const char** reason);
  Step after_value();

  std::string buffer_;  // the value's bytes from earlier feed() calls
  std::string stack_;   // '{' or '[' per open container
  std::size_t max_bytes_;
  State state_ = State::kValue;
  bool string_is_key_ = false;
  std::uint8_t hex_left_ = 0;
};

}  // namespace detail

class ListSink {
 public:
  virtual ~ListSink() = default;
  // A top-level member other than "items", with its raw value text. `key` is the member name
  // unescaped (`"\u0069tems"` is "items", as any JSON parser reads it).
  virtual void member(std::string_view key, std::string_view raw_value) = 0;
  // `"items":null` is reported as items_begin() then items_end(): Go clients decode it as an
  // empty list.
  virtual void items_begin() = 0;
  // One element of "items", as raw JSON text (an object, or whatever the element is).
  virtual void item(std::string_view raw) = 0;
  virtual void items_end() = 0;
  // The closing brace of the list was seen.
  virtual void end() = 0;
};

class ListFramer {
 public:
  explicit ListFramer(ListSink& sink, std::size_t max_value_bytes = kMaxFramedValueBytes);
  // Feeds the next bytes of the body (any split, down to one byte at a time). After an error
  // every later feed fails too. Errors: not a JSON object at the top, malformed JSON, a member or
  // item over the size bound, bytes after the closing brace (other than whitespace), "items"
  // that is neither an array nor null, or a second "items". Raw texts passed to the sink are
  // valid only during the call.
  Status feed(std::string_view bytes);
  bool done() const;  // the list's closing brace was seen

 private:
  enum class State : std::uint8_t {
    kStart,
    kKeyOrEnd,
    kKey,
    kInKey,
    kColon,
    kBeforeValue,
    kInValue,
    kItemsNull,
    kAfterMember,
    kItemOrEnd,
    kItem,
    kInItem,
    kAfterItem,
    kDone,
    kFailed,
  };
  bool structural(char c, std::size_t* pos, const char** reason);
  bool start_key(char c, const char** reason);
  bool start_item();
  bool start_value(char c, std::size_t* pos, const char** reason);
  bool scanned(std::string_view value, const char** reason);
  Status fail(const char* reason, std::size_t pos);

  ListSink& sink_;
  detail::ValueScanner scanner_;
  std::string key_;           // the member being read (decoded)
  std::string error_;         // the first error, repeated by every later feed()
  std::uint64_t offset_ = 0;  // bytes fed before the current feed() call
  State state_ = State::kStart;
  bool items_seen_ = false;
};

class WatchFramer {
 public:
  explicit WatchFramer(std::size_t max_value_bytes = kMaxFramedValueBytes);
  // Feeds the next bytes of the stream; calls `on_event(raw)` for every complete top-level value,
  // in order, as soon as its last byte is fed (a bare number or literal, which no watch event
  // is, when the byte after it is). `raw` is valid only during the call. Errors: malformed JSON
  // between events, an event over the size bound. After an error every later feed fails too.
  Status feed(std::string_view bytes, const std::function<void(std::string_view raw)>& on_event);

 private:
  detail::ValueScanner scanner_;
  std::string error_;         // the first error, repeated by every later feed()
  std::uint64_t offset_ = 0;  // bytes fed before the current feed() call
  bool in_value_ = false;
};

// The two members of one watch event, `{"type":"ADDED","object":{...}}`: the type's text (as
// sent, between its quotes) and the object's raw JSON. nullopt when `raw` is not one JSON object.
struct WatchEventParts {
  std::string type;
  std::string object;
};
std::optional<WatchEventParts> split_watch_event(std::string_view raw);

}  // namespace yurthub::base
