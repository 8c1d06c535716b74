// The cache's response taps; see response_taps.h.
#include "cache/response_taps.h"

#include <cstdint>

#include <rapidjson/document.h>

#include "base/json_frames.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "kube/object_meta.h"
#include "kube/watch_list.h"

namespace yurthub::cache {
namespace {

constexpr std::size_t kSubmitBytes = 256 * 1024;      // batch ops up to this much per submit
constexpr std::size_t kMaxObjectBytes = 16u << 20;    // one GET response
constexpr std::size_t kMaxDiscoveryBytes = 4u << 20;  // one discovery document

std::string_view unquote(std::string_view raw) {
  return raw.size() >= 2 && raw.front() == '"' && raw.back() == '"' ? raw.substr(1, raw.size() - 2)
                                                                    : raw;
}

// Shared by every tap: the failure flag, batching and submission.
class TapBase : public TapCore {
 public:
  TapBase(CacheWriter& writer, CacheMetrics& metrics, std::string identity)
      : writer_(writer),
        metrics_(metrics),
        identity_(std::move(identity)),
        failed_(std::make_shared<std::atomic<bool>>(false)) {}

  bool failed() const override { return failed_->load(); }
  // Only a watch's tap takes events; the others take bytes.
  void event(std::string_view) override {
    fail("framing", "an event for a response that is not a watch");
  }
  void events_done() override { submit(); }
  void unframeable(std::string_view why) override { fail("framing", std::string(why)); }
  void fell_behind() override { fail("queue_full", "the cache's tap queue is behind"); }

 protected:
  CacheOp op(OpKind kind) {
    CacheOp o;
    o.kind = kind;
    o.identity = identity_;
    o.failed = failed_;
    return o;
  }
  void queue(CacheOp o) {
    pending_bytes_ += o.json.size() + o.name.size() + 64;
    pending_.push_back(std::move(o));
  }
  // Submits what is pending; on a full queue everything is dropped and the list marked stale.
  void submit() {
    if (pending_.empty() || broken_) return;
    if (!writer_.submit(std::move(pending_))) fail("queue_full", "the cache writer is behind");
    pending_.clear();
    pending_bytes_ = 0;
  }
  void submit_if_large() {
    if (pending_bytes_ >= kSubmitBytes) submit();
  }
  void fail(const char* reason, const std::string& detail) {
    if (broken_) return;
    broken_ = true;
    failed_->store(true);
    pending_.clear();
    metrics_.failures.with({reason}).inc();
    if (!identity_.empty()) writer_.mark_stale(identity_);
    YH_LOG(Warning) << "cache: not caching a response for " << describe() << ": " << detail;
  }
  std::string describe() const {
    auto id = ListIdentity::parse(identity_);
    return id ? id->describe() : identity_;
  }

  CacheWriter& writer_;
  CacheMetrics& metrics_;
  std::string identity_;
  std::shared_ptr<std::atomic<bool>> failed_;
  std::vector<CacheOp> pending_;
  std::size_t pending_bytes_ = 0;
  bool broken_ = false;
};

class ListTap final : public TapBase, private base::ListSink {
 public:
  ListTap(CacheWriter& writer, CacheMetrics& metrics, const ListIdentity& identity,
          bool continuation, bool names_version)
      : TapBase(writer, metrics, identity.key()),
        framer_(*this),
        continuation_(continuation),
        names_version_(names_version),
        token_(writer.new_list_token()) {}

  void body(std::string_view bytes) override {
    if (broken_) return;
    if (Status s = framer_.feed(bytes); !s) fail("framing", s.error().message);
  }
  // The filter's framing of the list, instead of bytes to frame here.
  base::ListSink* list_sink() override { return this; }
  void share_piece(const std::shared_ptr<const std::string>& piece) override { piece_ = piece; }
  void end(bool complete) override {
    const bool whole = complete && !broken_ && closed_ && began_;
    submit();
    if (!began_) return;  // nothing was queued for this list
    CacheOp last = op(OpKind::ListEnd);
    last.list_token = token_;
    last.resource_version = list_rv_;
    last.final_page = !has_continue_;
    last.complete = whole;
    last.names_version = names_version_;
    // The end must reach the writer even when the queue is full, or the staging set leaks.
    std::vector<CacheOp> ops;
    ops.push_back(std::move(last));
    writer_.submit_control(std::move(ops));
  }

 private:
  void member(std::string_view key, std::string_view raw) override {
    if (key == "kind")
      kind_ = unquote(raw);
    else if (key == "apiVersion")
      api_version_ = unquote(raw);
    else if (key == "metadata")
      read_list_metadata(raw);
  }
  void read_list_metadata(std::string_view raw) {
    rapidjson::Document doc;
    if (!base::parse_json(raw, doc) || !doc.IsObject()) return;
    if (auto rv = doc.FindMember("resourceVersion");
        rv != doc.MemberEnd() && rv->value.IsString()) {
      list_rv_ = kube::parse_resource_version({rv->value.GetString(), rv->value.GetStringLength()});
    }
    if (auto c = doc.FindMember("continue"); c != doc.MemberEnd() && c->value.IsString()) {
      has_continue_ = c->value.GetStringLength() > 0;
    }
  }
  void items_begin() override {
    began_ = true;
    CacheOp first = op(OpKind::ListBegin);
    first.list_token = token_;
    first.continuation = continuation_;
    first.json = kind_;
    first.api_version = api_version_;
    queue(std::move(first));
  }
  void item(std::string_view raw) override {
    auto meta = kube::object_meta(raw);
    if (!meta || meta->name.empty()) {
      fail("framing", "a list item without metadata.name");
      return;
    }
    CacheOp o = op(OpKind::ListItem);
    o.list_token = token_;
    o.namespace_name = std::move(meta->namespace_name);
    o.name = std::move(meta->name);
    o.resource_version = meta->resource_version;
    if (in_piece(raw)) {
      o.piece = piece_;
      o.item = raw;
    } else {
      o.json.assign(raw);  // it spanned two pieces (the framer's copy), or there is no piece
    }
    queue(std::move(o));
    submit_if_large();
  }
  void items_end() override {}
  void end() override { closed_ = true; }
  bool in_piece(std::string_view raw) const {
    if (!piece_) return false;
    const auto begin = reinterpret_cast<std::uintptr_t>(piece_->data());
    const auto at = reinterpret_cast<std::uintptr_t>(raw.data());
    return at >= begin && at + raw.size() <= begin + piece_->size();
  }

  base::ListFramer framer_;
  bool continuation_;
  bool names_version_;
  std::uint64_t token_;
  std::string kind_, api_version_;
  std::uint64_t list_rv_ = 0;
  bool has_continue_ = false;
  bool began_ = false;
  bool closed_ = false;                       // the list's closing brace was seen
  std::shared_ptr<const std::string> piece_;  // the piece being read (share_piece)
};

class WatchTap final : public TapBase {
 public:
  // `streaming_list`: the watch asked for its initial events (kube/watch_list.h); they are the
  // list they stand for, assembled in a staging set as a list's items are, until the BOOKMARK
  // that ends them.
  WatchTap(CacheWriter& writer, CacheMetrics& metrics, const ListIdentity& identity,
           bool start_failed, bool streaming_list)
      : TapBase(writer, metrics, identity.key()),
        streaming_list_(streaming_list),
        listing_(streaming_list) {
    if (start_failed) failed_->store(true);
    if (listing_) token_ = writer.new_list_token();
  }

  void body(std::string_view) override { fail("framing", "a watch fed as bytes, not events"); }
  void end(bool) override {
    submit();
    if (listing_) end_list(false, 0);  // cut before its end bookmark: the old set stays
  }
  void recheck_stale() override {
    // A streaming list is the list that rebuilds a stale set, not a watch that follows it.
    if (!streaming_list_ && writer_.known_stale(identity_)) failed_->store(true);
  }

  void event(std::string_view raw) override {
    if (broken_) return;
    auto parts = base::split_watch_event(raw);
    if (!parts) {
      fail("framing", "a watch event that is not a JSON object");
      return;
    }
    auto& parsed = *parts;
    OpKind kind;
    if (parsed.type == "ADDED" || parsed.type == "MODIFIED")
      kind = OpKind::Upsert;
    else if (parsed.type == "DELETED")
      kind = OpKind::Delete;
    else if (parsed.type == "BOOKMARK")
      kind = OpKind::Bookmark;
    else
      return;  // ERROR (e.g. 410 Expired) carries a Status, not an object
    auto meta = kube::object_meta(parsed.object);
    if (!meta || (kind != OpKind::Bookmark && meta->name.empty())) {
      fail("framing", "a watch event without object metadata");
      return;
    }
    if (listing_) {
      initial_event(kind, parsed.object, *meta);
      return;
    }
    CacheOp o = op(kind);
    o.namespace_name = std::move(meta->namespace_name);
    o.name = std::move(meta->name);
    o.resource_version = meta->resource_version;
    if (kind == OpKind::Upsert) o.json = std::move(parsed.object);
    queue(std::move(o));
  }

 private:
  // Before the end bookmark, what the client-go reflector puts in its temporary store: ADDED
  // and MODIFIED objects, less the DELETED ones (live events may precede the bookmark).
  void initial_event(OpKind kind, std::string& object, kube::ObjectMeta& meta) {
    if (kind == OpKind::Bookmark && !kube::marks_initial_events_end(object)) return;
    begin_list(object);
    if (kind == OpKind::Bookmark) {
      end_list(true, meta.resource_version);
      return;
    }
    CacheOp o = op(kind == OpKind::Upsert ? OpKind::ListItem : OpKind::ListRemove);
    o.list_token = token_;
    o.namespace_name = std::move(meta.namespace_name);
    o.name = std::move(meta.name);
    o.resource_version = meta.resource_version;
    if (kind == OpKind::Upsert) o.json = std::move(object);
    queue(std::move(o));
  }
  // The list's kind and apiVersion are the first object's (the bookmark's when it comes first:
  // an empty list).
  void begin_list(std::string_view object) {
    if (began_) return;
    began_ = true;
    CacheOp first = op(OpKind::ListBegin);
    first.list_token = token_;
    rapidjson::Document doc;
    if (base::parse_json(object, doc) && doc.IsObject()) {
      const auto text = [&doc](const char* key) {
        auto it = doc.FindMember(key);
        return it != doc.MemberEnd() && it->value.IsString()
                   ? std::string(it->value.GetString(), it->value.GetStringLength())
                   : std::string();
      };
      const std::string item_kind = text("kind");
      if (!item_kind.empty()) first.json = item_kind + "List";
      first.api_version = text("apiVersion");
    }
    queue(std::move(first));
  }
  // The list ends, whole (at its end bookmark's resourceVersion) or not; the events after it
  // update the set as a watch's do.
  void end_list(bool complete, std::uint64_t resource_version) {
    listing_ = false;
    if (!began_) return;
    submit();
    CacheOp last = op(OpKind::ListEnd);
    last.list_token = token_;
    last.resource_version = resource_version;
    last.final_page = true;
    last.complete = complete && !broken_;
    // The end must reach the writer even when the queue is full, or the staging set leaks.
    std::vector<CacheOp> ops;
    ops.push_back(std::move(last));
    writer_.submit_control(std::move(ops));
  }

  const bool streaming_list_;
  bool listing_;  // before the end bookmark of a streaming list
  bool began_ = false;
  std::uint64_t token_ = 0;
};

// A whole small body: a GET's object or a discovery document.
class WholeBodyTap final : public TapBase {
 public:
  WholeBodyTap(CacheWriter& writer, CacheMetrics& metrics, std::string identity, std::string path,
               std::size_t limit, std::string unchanged_key = {})
      : TapBase(writer, metrics, std::move(identity)),
        path_(std::move(path)),
        unchanged_key_(std::move(unchanged_key)),
        limit_(limit) {}

  void body(std::string_view bytes) override {
    if (broken_) return;
    if (body_.size() + bytes.size() > limit_) {
      fail("framing", "response larger than " + std::to_string(limit_) + " bytes");
      return;
    }
    body_.append(bytes);
  }
  void end(bool complete) override {
    if (broken_ || !complete) return;
    if (!path_.empty()) {
      CacheOp o = op(OpKind::Discovery);
      o.name = path_;
      o.json = std::move(body_);
      queue(std::move(o));
    } else {
      // The same answer as the GET before: stored already, nothing to read or write.
      if (!unchanged_key_.empty() && writer_.unchanged_gets().unchanged(unchanged_key_, body_)) {
        return;
      }
      auto meta = kube::object_meta(body_);
      if (!meta || meta->name.empty()) return;  // not an object (e.g. a Status): nothing to keep
      CacheOp o = op(OpKind::Upsert);
      o.namespace_name = std::move(meta->namespace_name);
      o.name = std::move(meta->name);
      o.resource_version = meta->resource_version;
      o.json = std::move(body_);
      o.get_answer = !unchanged_key_.empty();
      queue(std::move(o));
    }
    submit();
  }

 private:
  std::string path_;
  std::string unchanged_key_;  // a GET's entry in UnchangedGets; empty for any other answer
  std::size_t limit_;
  std::string body_;
};

}  // namespace

std::unique_ptr<hub::ResponseTap> make_list_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                const ListIdentity& identity,
                                                const kube::RequestInfo& info, TapQueue* queue) {
  const bool continuation = !info.continue_token.empty();
  const bool names_version =
      continuation || (!info.resource_version.empty() && info.resource_version != "0");
  if (!queue)
    return std::make_unique<ListTap>(writer, metrics, identity, continuation, names_version);
  return deferred_list_tap(
      std::make_shared<ListTap>(writer, metrics, identity, continuation, names_version), *queue);
}

std::unique_ptr<hub::ResponseTap> make_watch_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                 const ListIdentity& identity,
                                                 const kube::RequestInfo& info, bool start_failed,
                                                 TapQueue* queue) {
  const bool streaming_list = kube::is_streaming_list(info);
  if (!queue) {
    return std::make_unique<WatchTap>(writer, metrics, identity, start_failed, streaming_list);
  }
  return deferred_watch_tap(
      std::make_shared<WatchTap>(writer, metrics, identity, start_failed, streaming_list), *queue);
}

std::unique_ptr<hub::ResponseTap> make_object_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                  const ListIdentity& get_set) {
  return make_object_tap(writer, metrics, get_set.key());
}

std::unique_ptr<hub::ResponseTap> make_object_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                  std::string get_set_key) {
  return std::make_unique<WholeBodyTap>(writer, metrics, std::move(get_set_key), "",
                                        kMaxObjectBytes);
}

std::unique_ptr<hub::ResponseTap> make_get_tap(CacheWriter& writer, CacheMetrics& metrics,
                                               std::string get_set_key, std::string_view ns,
                                               std::string_view name) {
  std::string unchanged_key = UnchangedGets::key(get_set_key, ns, name);
  return std::make_unique<WholeBodyTap>(writer, metrics, std::move(get_set_key), "",
                                        kMaxObjectBytes, std::move(unchanged_key));
}

std::unique_ptr<hub::ResponseTap> make_discovery_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                     const std::string& path) {
  return std::make_unique<WholeBodyTap>(writer, metrics, "", path, kMaxDiscoveryBytes);
}

}  // namespace yurthub::cache
