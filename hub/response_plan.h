// ResponsePlan: what the hub does with one exchange's response, decided in one place. Before the
// request is sent (plan_request): whether the cache or a filter wants the response, and so
// whether to ask the apiserver for JSON and read a keyed request body whole. When the response
// header arrives (plan_response): whether the cache's tap and the filter read the body, whether
// it is decoded for them, how it is framed for the client and whether the client's connection
// stays open. Pure (no I/O, no hooks): the Forwarder gathers the facts, the ResponseRelay follows
// the plan. Unit-tested in test/hub/response_plan_test.cc.
#pragma once

#include <string_view>

namespace yurthub::hub {

// The request's side, from the hooks' answers.
struct RequestPlan {
  bool cache = false;       // the node cache keeps this response (CacheHooks::cacheable)
  bool filter = false;      // a response filter transforms it (FilterHooks::filter)
  bool keyed_body = false;  // the cache keys the answer by the request body: read it whole first
  // The cache and the filters read JSON: kubelet and kube-proxy ask for protobuf but accept JSON
  // (docs/offline-semantics.md).
  bool ask_json() const { return cache || filter; }
};

// `head_only`: a HEAD request, whose response has no body to read. `wants_body`: the cache
// keys this request's answer by its body (CacheHooks::wants_request_body).
RequestPlan plan_request(bool head_only, bool cacheable, bool has_filter, bool wants_body);

// What the apiserver's response header says. The content type and encoding matter only when the
// RequestPlan has a reader (the cache or a filter); the Forwarder leaves them empty otherwise.
struct ResponseHead {
  unsigned code = 0;
  std::string_view content_type;
  std::string_view content_encoding;
  bool chunked = false;
  bool has_length = false;  // Content-Length given
  bool body_done = false;   // no body follows (or it was all read with the header)
};

// The client's side.
struct ClientSide {
  unsigned version = 11;      // HTTP/1.x minor: 10 or 11
  bool keep_alive = false;    // the client allows another request and sent its whole body
  bool long_running = false;  // a watch, logs -f, exec...: RequestInfo::is_long_running()
  bool draining = false;      // the hub is shutting down
};

enum class ClientFraming {
  AsSent,      // the apiserver's Content-Length or chunking
  Chunked,     // re-framed chunked: a filtered body, or one the apiserver delimited by closing
  UntilClose,  // an HTTP/1.0 client: no chunking, the body ends when the connection closes
};

struct ResponsePlan {
  bool streaming = false;       // a long-running 200: written piece by piece as it arrives
  bool tap = false;             // the cache's tap reads the body
  bool filter = false;          // the filter transforms the body; the client gets its output
  bool decode_gzip = false;     // the body is gzip: decoded for the tap and the filter
  bool client_encoded = false;  // the client gets the body still encoded as the apiserver sent it
  // The filter's output replaces the body: Content-Encoding and Content-Length are dropped.
  bool drop_body_headers = false;
  ClientFraming framing = ClientFraming::AsSent;
  bool keep_alive = false;  // the client's connection stays open once the response is complete
  // Why the filter or tap the request wanted does not read this successful body (logged); null
  // when they read it, and for an error status (its Status passes as sent).
  const char* unread_because = nullptr;
};

ResponsePlan plan_response(const RequestPlan& request, const ResponseHead& head,
                           const ClientSide& client);

}  // namespace yurthub::hub
