// Offline watches and streaming lists, LocalProxy::watch; see local_proxy.h. A plain watch is
// held open with bookmarks and the node's own journaled changes. A streaming list (kube/
// watch_list.h) first gets, as kube-apiserver's watch cache answers it, an ADDED event for every
// object of the complete cached list that covers it (its selectors applied here), then the
// BOOKMARK that ends the initial events at that list's resourceVersion, then the same held watch;
// a streaming list no cached list covers gets the list's 404, on which client-go falls back to a
// list (docs/offline-semantics.md, "Streaming lists").
#include <algorithm>

#include "base/clock.h"
#include "cache/cached_lists.h"
#include "cache/local_answer.h"
#include "cache/local_proxy.h"
#include "kube/watch_list.h"

namespace yurthub::cache {
namespace asio = boost::asio;

namespace {

void append_added(std::string& out, std::string_view json, const ListRecord& record) {
  out += R"({"type":"ADDED","object":)";
  out += as_get_response(json, record);
  out += "}\n";
}

}  // namespace

asio::awaitable<bool> LocalProxy::write_initial_events(std::vector<std::string_view>& items,
                                                       const ListRecord& record,
                                                       std::unique_ptr<ReadView>& view,
                                                       hub::ResponseWriter& out) {
  // As write_list: pieces straight from the snapshot while the client keeps up, and what is
  // left copied out once snapshot_hold has passed, so a slow client never pins LMDB's pages.
  const auto release_at = base::Clock::now() + options_.snapshot_hold;
  std::string piece;
  piece.reserve(options_.write_bytes * 2);
  std::size_t next = 0;
  for (; next < items.size(); ++next) {
    if (piece.size() >= options_.write_bytes) {
      if (base::Clock::now() >= release_at) break;
      if (!co_await out.write(piece)) co_return false;
      piece.clear();
    }
    append_added(piece, items[next], record);
  }
  for (; next < items.size(); ++next) append_added(piece, items[next], record);
  items.clear();
  view.reset();
  for (std::size_t at = 0; at < piece.size(); at += options_.write_bytes) {
    if (!co_await out.write(std::string_view(piece).substr(at, options_.write_bytes)))
      co_return false;
  }
  co_return true;
}

asio::awaitable<unsigned> LocalProxy::watch(const kube::RequestInfo& info,
                                            const ListIdentity& identity,
                                            hub::ResponseWriter& out) {
  const auto label = kube::LabelSelector::parse(info.label_selector);
  const auto field = kube::FieldSelector::parse(info.field_selector);
  const bool streaming_list = kube::is_streaming_list(info);
  // Changes the node makes while offline (journaled writes) reach the watch as MODIFIED events;
  // subscribed before a streaming list's snapshot is read, so none made meanwhile is missed.
  auto changes =
      events_.subscribe(identity.component, identity.group, identity.version, identity.resource,
                        info.namespace_name, out.waker(), identity.owner);
  // The record that gives bookmarks their kind and resourceVersion: this identity's, else a list
  // that covers the request. A streaming list's is the covering list its events come from.
  std::optional<ListRecord> record;
  auto view = store_.read();
  const auto covering = [&]() -> std::optional<ListChoice> {
    if (!label || !field) return std::nullopt;
    return choose_list(*view, identity, *label, *field);
  };
  Page initial;
  if (streaming_list) {
    const std::optional<ListChoice> choice = covering();
    metrics_.lookups.with({"watch_list", choice ? "hit" : "miss"}).inc();
    if (!choice) {
      view.reset();
      co_return co_await send_status(out, not_cached_error(info));
    }
    record = choice->record;
    // The selectors the covering list did not apply, filtered here; null: already applied.
    const kube::LabelSelector* label_filter =
        choice->identity.label_selector != identity.label_selector ? &*label : nullptr;
    const kube::FieldSelector* field_filter =
        choice->identity.field_selector != identity.field_selector ? &*field : nullptr;
    initial = read_page(*view, record->set_id, info, std::nullopt, label_filter, field_filter, 0);
  } else {
    record = view->list(identity.key());
    if (!record || item_kind(*record).empty()) {
      if (auto choice = covering()) record = choice->record;
    }
    metrics_.lookups.with({"watch", record ? "hit" : "miss"}).inc();
    view.reset();  // no read transaction is held while the watch waits
  }
  if (!co_await out.start(200, "application/json")) co_return 0;
  const bool bookmarks = info.allow_watch_bookmarks && record && !item_kind(*record).empty();
  if (streaming_list) {
    if (!co_await write_initial_events(initial.items, *record, view, out)) co_return 200;
    // Only a client that allows bookmarks gets the end bookmark, as from the apiserver (client-go
    // always does).
    if (bookmarks) {
      const std::string end = kube::initial_events_end_bookmark(
          item_kind(*record), record->api_version, record->resource_version);
      if (!co_await out.write(end)) co_return 200;
    }
  }

  const auto deadline = watch_deadline(info, options_.min_request_timeout);
  for (;;) {
    const auto now = base::Clock::now();
    if (now >= deadline) break;
    const auto wake = bookmarks ? std::min(deadline, now + options_.bookmark_interval) : deadline;
    // Ends early when a server turns healthy (the client then re-watches upstream), when the
    // client leaves, or when the hub drains.
    if (auto reason = co_await out.wait_until(wake)) break;
    if (changes->overflowed()) break;  // the client re-watches, and lists if it must
    auto taken = changes->take();
    for (const LocalChange& change : taken) {
      if (!label || !field || !watch_selects(*label, *field, info, change)) continue;
      const std::string event = "{\"type\":\"MODIFIED\",\"object\":" + change.json + "}\n";
      if (!co_await out.write(event)) co_return 200;
    }
    // Woken for local changes, not by the clock: no bookmark is due.
    if (!taken.empty() || !bookmarks || base::Clock::now() >= deadline) continue;
    auto current = store_.read()->list(identity.key());
    const std::uint64_t rv = current ? current->resource_version : record->resource_version;
    const std::string event = bookmark_event(item_kind(*record), record->api_version, rv);
    if (!co_await out.write(event)) co_return 200;
  }
  co_await out.finish();
  co_return 200;
}

}  // namespace yurthub::cache
