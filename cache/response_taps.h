// Response taps: what the cache does with the body of one cacheable response as it is relayed.
//   list      frames items one by one (base/json_frames.h), or takes them as the response filter
//             framed them (list_sink()), and queues ListBegin/ListItem/ListEnd;
//   watch     takes the events the hub framed and queues Upsert/Delete/Bookmark, in order; a
//             streaming list's initial events, ListBegin/ListItem/ListRemove/ListEnd;
//   object    a GET: keeps the body (bounded) and queues one Upsert into the resource's get set;
//   discovery keeps the document (bounded) and queues it.
// Operations are batched (up to 256 KiB of a list's items; per events_done() for a watch) and
// submitted to the CacheWriter. A tap never blocks and never throws: a body it cannot frame, or a
// full writer (or tap) queue, counts a failure, marks the list stale and sets failed(). Created by
// NodeCache::tap() on a worker thread; used on that thread, except for lists and watches given a
// TapQueue, whose work moves to the queue's thread (tap_queue.h).
#pragma once

#include <memory>
#include <string>

#include "cache/cache_metrics.h"
#include "cache/cache_writer.h"
#include "cache/list_identity.h"
#include "cache/tap_queue.h"
#include "hub/hooks/cache_hooks.h"
#include "kube/request_info.h"

namespace yurthub::cache {

// `info`: the list request; a continue token or a named resourceVersion (not "" or "0") may ask
// for an older snapshot than the cached set, which then keeps its set (CacheWriter::list_end).
// With `queue`, the body is digested on its thread (tap_queue.h); without, on the caller's.
std::unique_ptr<hub::ResponseTap> make_list_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                const ListIdentity& identity,
                                                const kube::RequestInfo& info,
                                                TapQueue* queue = nullptr);
// `start_failed`: the list is already stale; the tap reports failed() at once so the client's
// watch is ended and it re-lists. With `queue`, its events wait behind the lists queued there.
// A streaming list (`info`, kube/watch_list.h) is a list first: its initial events up to the end
// bookmark are assembled as a list response's items are, and replace the identity's set (whole,
// at the bookmark's resourceVersion) as a complete list does; the events after it update that set.
std::unique_ptr<hub::ResponseTap> make_watch_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                 const ListIdentity& identity,
                                                 const kube::RequestInfo& info, bool start_failed,
                                                 TapQueue* queue = nullptr);
std::unique_ptr<hub::ResponseTap> make_object_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                  const ListIdentity& get_set);
// The same, for a caller that has the get set's key already (ListIdentity::key()).
std::unique_ptr<hub::ResponseTap> make_object_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                  std::string get_set_key);
// The tap of a GET of object `name` in namespace `ns`: an answer the same as what the cache
// holds for it is skipped (UnchangedGets).
std::unique_ptr<hub::ResponseTap> make_get_tap(CacheWriter& writer, CacheMetrics& metrics,
                                               std::string get_set_key, std::string_view ns,
                                               std::string_view name);
std::unique_ptr<hub::ResponseTap> make_discovery_tap(CacheWriter& writer, CacheMetrics& metrics,
                                                     const std::string& path);

}  // namespace yurthub::cache
