// The hub's extension point for response filters (filters/ implements it; the hub knows no
// filter, and the filters know nothing of streams and sockets):
//
//   FilterHooks     asked by the Forwarder for every request: a filter for its response (then the
//                   hub asks the apiserver for JSON), and are the filters ready.
//   ResponseFilter  transforms one response body as it streams past: whole objects and list
//                   items (framed by the filter), watch events (framed by the hub). For
//                   watches it can also produce corrections when what the filters read
//                   (Services, pool membership) changed.
//
// Threading: FilterHooks is called from every worker thread and must be thread-safe. A
// ResponseFilter belongs to one request on one worker thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hub/hooks/filter_status.h"
#include "kube/request_info.h"

namespace yurthub::base {
class ListSink;  // base/json_frames.h
}  // namespace yurthub::base

namespace yurthub::hub {

class ResponseFilter {
 public:
  virtual ~ResponseFilter() = default;
  // Gets and lists: transforms the next bytes of the (decoded) body, appending what the client
  // gets to *out. Send: bytes were appended. Hold: none (a get's object is kept until finish(),
  // a list item until its end arrives). Cut: the body cannot be framed (malformed JSON, an object
  // over the size bound), so what follows cannot be filtered.
  virtual FilterStatus feed(std::string_view bytes, std::string* out) = 0;
  // Watches: one whole event, as the hub framed it from the stream (the exact text of one JSON
  // value). Appends what the client gets of it to *out: at most one event, ending in a newline.
  // Send: an event was appended; Hold: the event is left out. An event the filters cannot read
  // passes as sent.
  virtual FilterStatus event(std::string_view raw, std::string* out) = 0;
  // Watches: the stream cannot be framed (malformed JSON between events, an event over the size
  // bound); nothing more comes and the response is cut short.
  virtual void unframeable(std::string_view why) = 0;
  // The whole body was fed; appends whatever is left (a get's object is only sent here). Send
  // (even with nothing left: the body is complete) or Cut (a list that ended unclosed).
  virtual FilterStatus finish(std::string* out) = 0;
  // Why the last call returned Cut, for the log.
  virtual std::string_view cut_reason() const = 0;
  // Watches: whether this response's filters depend on state that changes while it is open.
  virtual bool reactive() const = 0;
  // Lists: tells `sink`, as well, each member and item the client gets, as it is appended to the
  // output (the cache's tap then reads the list framed once, here). False, telling nothing, when
  // this filter does not frame the response as a list. Before the first feed().
  virtual bool echo_list(base::ListSink* sink) {
    (void)sink;
    return false;
  }
  // Watches: the filters' inputs changed. Appends events that correct what the client was sent
  // (MODIFIED with the object filtered anew; ADDED or DELETED when its visibility changed), each
  // compact JSON on a line of its own (so a newline is where one ends). Send: events were
  // appended; Hold: nothing needed correcting; Relist: it cannot (too many objects were sent to
  // keep them), the client must re-list.
  virtual FilterStatus correct(std::string* out) = 0;
};

class FilterHooks {
 public:
  virtual ~FilterHooks() = default;
  // A filter for the response to this request, or nullptr when it is not filtered. With a
  // filter, the Forwarder asks the apiserver for JSON, waits (bounded) for ready(), and relays a
  // 2xx JSON response through it.
  virtual std::unique_ptr<ResponseFilter> filter(const kube::RequestInfo& info) = 0;
  // The filters' inputs (informers) have been listed once; until then filtered requests wait.
  virtual bool ready() const = 0;
};

}  // namespace yurthub::hub
