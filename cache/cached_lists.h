// Reading the cached lists an offline answer is made from: which complete list covers a request,
// a page of its objects with the request's selectors applied, and whether a local change shows
// in a watch. Shared by LocalProxy's lists (local_proxy.cc) and its watches and streaming lists
// (local_watch.cc); everything here reads one ReadView and returns views into it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/list_identity.h"
#include "cache/local_events.h"
#include "cache/local_proxy.h"
#include "cache/store.h"
#include "kube/request_info.h"
#include "kube/selector.h"
#include "kube/status.h"

namespace yurthub::cache {

struct ListChoice {
  ListIdentity identity;
  ListRecord record;
};

// The kind of a list's items ("Pod" of "PodList"; "" when the record has none).
std::string item_kind(const ListRecord& record);

// The 404 for a list or streaming list no cached list covers. Never an empty list for something
// never listed: kubelet would take it as "no pods"; a streaming list's client-go falls back to a
// list on it, and gets the same.
kube::ApiError not_cached_error(const kube::RequestInfo& info);

// The cached list to answer a request from: complete, in the request's namespace or all, with
// selectors covering the request's; the exact identity first, else the most recently synced.
std::optional<ListChoice> choose_list(ReadView& view, const ListIdentity& wanted,
                                      const kube::LabelSelector& label,
                                      const kube::FieldSelector& field);

// A page of a cached list: views into the snapshot (valid while its ReadView lives), in key
// order; `last` is the page's last object when a `limit` applies, `more` whether objects follow.
struct Page {
  std::vector<std::string_view> items;
  ContinuePoint last;
  bool more = false;
};

// Reads the page of set `set` from `from` (else the start), in `info`'s namespace, filtered by
// the selectors given (null: not filtered), at most `limit` objects (0: all).
Page read_page(ReadView& view, std::uint32_t set, const kube::RequestInfo& info,
               const std::optional<ContinuePoint>& from, const kube::LabelSelector* label_filter,
               const kube::FieldSelector* field_filter, std::size_t limit);

// Whether an offline watch with these selectors (and metadata.name, when it names one) shows a
// local change.
bool watch_selects(const kube::LabelSelector& label, const kube::FieldSelector& field,
                   const kube::RequestInfo& info, const LocalChange& change);

}  // namespace yurthub::cache
