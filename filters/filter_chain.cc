// Framing and filtering of one response; see filter_chain.h.
#include "filters/filter_chain.h"

#include "base/json_parse.h"
#include "base/log.h"
#include "filters/object_access.h"

namespace yurthub::filters {

namespace {

void append_json_string(std::string_view text, std::string* out) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  out->append(buffer.GetString(), buffer.GetSize());
}

// "namespace/name" of an object ("name" when cluster-scoped); "" without a name.
std::string key_of(const rapidjson::Value& object) {
  const std::string_view name = metadata_string(object, "name");
  if (name.empty()) return {};
  const std::string_view ns = metadata_string(object, "namespace");
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

// The JSON of an event's "object", as the apiserver sent it (re-serialized). REQUIRES: `raw` is
// an event that parsed with an object ("null" if it did not, rather than undefined behaviour).
std::string original_object_json(std::string_view raw) {
  rapidjson::Document event;
  if (!base::parse_json(raw, event) || !event.IsObject()) return "null";
  auto it = event.FindMember("object");
  return it == event.MemberEnd() ? "null" : base::to_json(it->value);
}

// Whether a watch event, as the apiserver writes it (Go's metav1.WatchEvent: "type" first), is an
// ADDED, MODIFIED or DELETED one: the events a filter sees, which may go on unparsed. Any other
// text (BOOKMARK, ERROR, another layout) is parsed, as before.
bool is_change_event(std::string_view raw) {
  return raw.starts_with(R"({"type":"ADDED",)") || raw.starts_with(R"({"type":"MODIFIED",)") ||
         raw.starts_with(R"({"type":"DELETED",)");
}

// Writes `{"type":<type>,"object":<object>}\n`.
void append_event(std::string_view type, std::string_view object_json, std::string* out) {
  out->append(R"({"type":")").append(type).append(R"(","object":)").append(object_json);
  out->append("}\n");
}

// What the filters made of one object: the verdict, the changed object's JSON (Modified only),
// and how a client that was sent it sees it (ClientView).
struct Outcome {
  Verdict verdict;
  std::string json;

  Outcome(Verdict v, const rapidjson::Value& object) : verdict(v) {
    if (v == Verdict::Modified) json = base::to_json(object);
  }
  ClientView::Seen seen() const {
    return verdict == Verdict::Modified ? ClientView::Seen::Modified
           : verdict == Verdict::Drop   ? ClientView::Seen::Dropped
                                        : ClientView::Seen::AsSent;
  }
  std::uint64_t digest() const {
    return verdict == Verdict::Modified ? std::hash<std::string>{}(json) : 0;
  }
};

}  // namespace

// Re-emits a framed list with its items filtered: members in the order received, dropped items
// left out.
class FilterChain::ListWriter final : public base::ListSink {
 public:
  explicit ListWriter(FilterChain& chain) : chain_(chain) {}
  base::ListFramer framer{*this};
  std::string* out = nullptr;
  View view;
  base::ListSink* echo = nullptr;  // told what is appended to *out (FilterChain::echo_list)

  void member(std::string_view key, std::string_view raw_value) override {
    separator();
    append_json_string(key, out);
    out->push_back(':');
    out->append(raw_value);
    if (echo) echo->member(key, raw_value);
  }
  void items_begin() override {
    separator();
    out->append(R"("items":[)");
    if (echo) echo->items_begin();
    first_item_ = true;
    if (chain_.client_view_ && chain_.first_page_) chain_.client_view_->clear(view);
  }
  void item(std::string_view raw) override {
    if (chain_.pass_unparsed(raw, *view)) {
      append_item(raw);
      return;
    }
    rapidjson::Document doc;
    const bool parsed = base::parse_insitu(raw, chain_.scratch_, doc) && doc.IsObject();
    Verdict verdict = Verdict::Keep;
    if (!parsed)
      chain_.count_parse_failure();
    else
      verdict = chain_.run(doc, doc.GetAllocator(), *view);
    const Outcome outcome(verdict, doc);
    if (chain_.client_view_ && parsed) {
      // Recorded as an ADDED event, the form the client's watch corrections read.
      const std::string key = key_of(doc);  // filters do not rename objects
      if (!key.empty()) {
        std::string event;
        append_event("ADDED", raw, &event);
        chain_.client_view_->put(key, event, outcome.seen(), outcome.digest(), view);
      }
    }
    if (verdict == Verdict::Drop) return;
    append_item(verdict == Verdict::Modified ? std::string_view(outcome.json) : raw);
  }
  void items_end() override {
    out->push_back(']');
    if (echo) echo->items_end();
  }
  void end() override {
    if (!opened_) out->push_back('{');
    out->push_back('}');
    if (echo) echo->end();
  }

 private:
  void separator() {
    out->push_back(opened_ ? ',' : '{');
    opened_ = true;
  }
  void append_item(std::string_view json) {
    if (!first_item_) out->push_back(',');
    first_item_ = false;
    out->append(json);
    if (echo) echo->item(json);
  }
  FilterChain& chain_;
  bool opened_ = false;
  bool first_item_ = true;
};

FilterChain::FilterChain(Shape shape, std::vector<const ObjectFilter*> filters, ViewSource view,
                         FilterMetrics& metrics, std::shared_ptr<ClientView> client_view,
                         bool first_page)
    : shape_(shape),
      filters_(std::move(filters)),
      view_(std::move(view)),
      metrics_(metrics),
      first_page_(first_page) {
  bool reactive_filter = false;
  counters_.reserve(filters_.size());
  for (const ObjectFilter* f : filters_) {
    reactive_filter = reactive_filter || f->reactive();
    counters_.push_back(metrics_.object_counters(f->name()));
  }
  if (reactive_filter && shape_ != Shape::Object) client_view_ = std::move(client_view);
  reactive_ = client_view_ != nullptr && shape_ == Shape::Watch;
  if (shape_ == Shape::List) list_ = std::make_unique<ListWriter>(*this);
}

FilterChain::~FilterChain() = default;

bool FilterChain::echo_list(base::ListSink* sink) {
  if (!list_) return false;
  list_->echo = sink;
  return true;
}

Verdict FilterChain::run(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
                         const ClusterView& view) {
  Verdict result = Verdict::Keep;
  for (std::size_t i = 0; i < filters_.size(); ++i) {
    if (!filters_[i]->ready(view)) continue;
    counters_[i].seen->inc();
    const Verdict v = filters_[i]->apply(object, allocator, view);
    if (v == Verdict::Drop) {
      counters_[i].dropped->inc();
      return Verdict::Drop;
    }
    if (v == Verdict::Modified) {
      counters_[i].modified->inc();
      result = Verdict::Modified;
    }
  }
  return result;
}

bool FilterChain::pass_unparsed(std::string_view raw, const ClusterView& view) {
  if (client_view_) return false;  // a reactive list or watch records the keys it sends: parsed
  for (const ObjectFilter* f : filters_) {
    if (f->ready(view) && f->may_change(raw)) return false;
  }
  for (std::size_t i = 0; i < filters_.size(); ++i) {
    if (filters_[i]->ready(view)) counters_[i].seen->inc();
  }
  return true;
}

void FilterChain::count_parse_failure() {
  for (const ObjectFilter* f : filters_)
    metrics_.parse_failures.with({std::string(f->name())}).inc();
}

hub::FilterStatus FilterChain::cut(std::string why) {
  metrics_.framing_failures.with({}).inc();
  cut_reason_ = std::move(why);
  return hub::FilterStatus::Cut;
}

hub::FilterStatus FilterChain::feed(std::string_view bytes, std::string* out) {
  switch (shape_) {
    case Shape::Object:
      if (object_.size() + bytes.size() > base::kMaxFramedValueBytes) {
        return cut("object larger than " + std::to_string(base::kMaxFramedValueBytes >> 20) +
                   " MiB");
      }
      object_.append(bytes);
      return hub::FilterStatus::Hold;  // sent whole by finish()
    case Shape::List: {
      list_->out = out;
      list_->view = view_();
      const std::size_t before = out->size();
      if (Status s = list_->framer.feed(bytes); !s) return cut(s.error().message);
      // Nothing appended: the bytes so far are inside one item (or all dropped).
      return out->size() > before ? hub::FilterStatus::Send : hub::FilterStatus::Hold;
    }
    case Shape::Watch:  // a misuse, not a framing failure: not counted
      cut_reason_ = "a watch is filtered by event, as the hub frames it";
      return hub::FilterStatus::Cut;
  }
  return hub::FilterStatus::Cut;
}

hub::FilterStatus FilterChain::event(std::string_view raw, std::string* out) {
  on_event(raw, view_(), out);
  return hub::FilterStatus::Send;  // a dropped object still goes out, as DELETED
}

void FilterChain::unframeable(std::string_view) { metrics_.framing_failures.with({}).inc(); }

hub::FilterStatus FilterChain::finish(std::string* out) {
  if (shape_ == Shape::List && !list_->framer.done())
    return cut("the list ended before its closing brace");
  if (shape_ != Shape::Object) return hub::FilterStatus::Send;
  const View view = view_();
  if (pass_unparsed(object_, *view)) {
    out->append(object_);
    object_.clear();
    return hub::FilterStatus::Send;
  }
  rapidjson::Document doc;
  const bool parsed = base::parse_insitu(object_, scratch_, doc) && doc.IsObject();
  Verdict verdict = Verdict::Keep;
  if (!parsed) {
    count_parse_failure();
  } else {
    verdict = run(doc, doc.GetAllocator(), *view);
  }
  // A dropped get is answered as sent: a filter hides objects from lists and watches, and a
  // fabricated 404 for an object that exists would be a lie the client cannot tell.
  if (verdict == Verdict::Modified)
    base::append_json(doc, out);
  else
    out->append(object_);
  object_.clear();
  return hub::FilterStatus::Send;
}

void FilterChain::on_event(std::string_view raw, const View& view, std::string* out) {
  if (is_change_event(raw) && pass_unparsed(raw, *view)) {  // the object is inside `raw`
    out->append(raw).push_back('\n');
    return;
  }
  rapidjson::Document event;
  const bool parsed = base::parse_insitu(raw, scratch_, event) && event.IsObject();
  std::string_view type;
  rapidjson::Value* object = nullptr;
  if (parsed) {
    type = string_member(event, "type").value_or("");
    if (auto it = event.FindMember("object"); it != event.MemberEnd()) object = &it->value;
  }
  const bool change = type == "ADDED" || type == "MODIFIED" || type == "DELETED";
  if (!change || !object || !object->IsObject()) {
    // BOOKMARK, ERROR, or an event the filters cannot read: as sent.
    if (change || !parsed) count_parse_failure();
    out->append(raw).push_back('\n');
    return;
  }
  const std::string key = client_view_ ? key_of(*object) : std::string();
  const Outcome outcome(run(*object, event.GetAllocator(), *view), *object);
  if (type == "DELETED") {
    if (!key.empty()) client_view_->erase(key);
    if (outcome.verdict == Verdict::Modified)
      append_event(type, outcome.json, out);
    else
      out->append(raw).push_back('\n');
    return;
  }
  if (outcome.verdict == Verdict::Keep) {
    out->append(raw).push_back('\n');
  } else if (outcome.verdict == Verdict::Modified) {
    append_event(type, outcome.json, out);
  } else {  // the filters may have changed `object` before dropping it: send the original
    append_event("DELETED", original_object_json(raw), out);
  }
  if (!key.empty()) client_view_->put(key, raw, outcome.seen(), outcome.digest(), view);
}

hub::FilterStatus FilterChain::correct(std::string* out) {
  if (!reactive_) return hub::FilterStatus::Hold;
  const std::size_t before = out->size();
  const auto view = view_();
  const bool ok = client_view_->for_each_stale(view, [&](ClientView::Entry& e) {
    rapidjson::Document event;
    // Entries were recorded from parsed events with an object, so this holds.
    if (!base::parse_json(e.raw_event, event) || !event.IsObject() || !event.HasMember("object")) {
      return;
    }
    rapidjson::Value& object = event["object"];
    const Outcome outcome(run(object, event.GetAllocator(), *view), object);
    const ClientView::Seen seen = outcome.seen();
    const std::uint64_t digest = outcome.digest();
    if (seen == e.seen && digest == e.digest) return;
    if (seen == ClientView::Seen::Dropped) {
      append_event("DELETED", original_object_json(e.raw_event), out);
    } else {
      const std::string json =
          seen == ClientView::Seen::Modified ? outcome.json : original_object_json(e.raw_event);
      append_event(e.seen == ClientView::Seen::Dropped ? "ADDED" : "MODIFIED", json, out);
    }
    e.seen = seen;
    e.digest = digest;
    metrics_.corrections.with({"event"}).inc();
  });
  if (!ok) {
    metrics_.corrections.with({"relist"}).inc();
    return hub::FilterStatus::Relist;
  }
  return out->size() > before ? hub::FilterStatus::Send : hub::FilterStatus::Hold;
}

}  // namespace yurthub::filters
