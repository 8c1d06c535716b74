// FilterChain: filters one response with an ordered list of ObjectFilters: a get's whole object,
// every item of a list (framed here, and echoed to the cache's tap; dropped items are left out,
// the list's other members kept as sent), every event of a watch (framed by the hub's
// BodyTransform, which shares the events with the cache's tap; a dropped object becomes a DELETED
// event carrying the object as the apiserver sent it, so the client forgets it). Objects the
// filters leave unchanged are passed on as the exact bytes received; only changed ones are
// re-serialized. Objects that cannot be parsed pass through unchanged and are counted. An object (a
// list item, a get's body, an ADDED/MODIFIED/DELETED event's whole text) that no ready filter
// may_change() is not parsed at all: its bytes go on as received, counted as seen by each ready
// filter, exactly as a parsed object every filter keeps; so if it was malformed, it is no parse
// failure. Not in a reactive list or watch, which parses what it sends to record it in the
// ClientView.
//
// A reactive list or watch (one of its filters depends on Services or pool membership) records
// what it sends in the client's ClientView, so correct() can re-filter everything the client
// holds when the ClusterView changes and emit the events that fix the client's view.
//
// Created per response by the FilterManager; used by the hub's relay on one worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json_frames.h"
#include "filters/client_view.h"
#include "filters/filter.h"
#include "filters/filter_metrics.h"
#include "hub/hooks/filter_hooks.h"

namespace yurthub::filters {

// The current ClusterView (an atomic load of the FilterManager's snapshot).
using ViewSource = std::function<std::shared_ptr<const ClusterView>()>;

class FilterChain final : public hub::ResponseFilter {
 public:
  enum class Shape { Object, List, Watch };

  // REQUIRES: `filters` non-empty, in chain order, and outliving the chain. `client_view`: where
  // a list or watch records what it sends, or null (no corrections). `first_page`: a list
  // request without a continue token (it replaces what the client held).
  FilterChain(Shape shape, std::vector<const ObjectFilter*> filters, ViewSource view,
              FilterMetrics& metrics, std::shared_ptr<ClientView> client_view = nullptr,
              bool first_page = true);
  ~FilterChain() override;

  hub::FilterStatus feed(std::string_view bytes, std::string* out) override;  // Object and List
  hub::FilterStatus event(std::string_view raw, std::string* out) override;   // Watch
  void unframeable(std::string_view why) override;
  hub::FilterStatus finish(std::string* out) override;
  bool echo_list(base::ListSink* sink) override;  // List only
  std::string_view cut_reason() const override { return cut_reason_; }
  bool reactive() const override { return reactive_; }
  hub::FilterStatus correct(std::string* out) override;

 private:
  class ListWriter;  // a ListSink re-emitting the list (filter_chain.cc)
  using View = std::shared_ptr<const ClusterView>;

  // Runs the filters on `object` with `view`. Counts per filter.
  Verdict run(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
              const ClusterView& view);
  // Whether `raw` goes on unparsed (see the top of this file); if so, counts it as run() counts
  // an object that every filter keeps.
  bool pass_unparsed(std::string_view raw, const ClusterView& view);
  void count_parse_failure();
  // Counts a framing failure and records why: the body is cut.
  hub::FilterStatus cut(std::string why);
  void on_event(std::string_view raw, const View& view, std::string* out);

  Shape shape_;
  std::vector<const ObjectFilter*> filters_;
  std::vector<ObjectCounters> counters_;  // parallel to filters_
  ViewSource view_;
  FilterMetrics& metrics_;
  bool reactive_ = false;

  std::shared_ptr<ClientView> client_view_;  // reactive lists and watches only
  bool first_page_;

  std::string object_;                // Shape::Object: the body so far
  std::unique_ptr<ListWriter> list_;  // Shape::List
  std::string scratch_;               // the in-situ parse of the object or event being filtered
  std::string cut_reason_;            // why feed() or finish() returned Cut
};

}  // namespace yurthub::filters
