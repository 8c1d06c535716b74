// The one place where the hub's failures become HTTP status codes and Kubernetes `Status` bodies
// (`{"kind":"Status","apiVersion":"v1",...}` exactly as kube-apiserver writes them, see
// test/testdata/fixtures/apiserver-v1.26/status-*.body). Everything that answers a client with an
// error calls api_error(); nothing else invents codes or reasons.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace yurthub::kube {

enum class Failure {
  BadRequest,           // malformed request line, headers or chunked body: 400
  HeaderTooLarge,       // request header over the limit: 431
  BodyTooLarge,         // request body over the limit: 413
  TooManyRequests,      // over --max-requests-in-flight: 429 (+ Retry-After)
  NoHealthyServer,      // every apiserver is unhealthy: 503
  UpstreamUnreachable,  // connect/TLS to a chosen apiserver failed: 503
  UpstreamClosed,       // the apiserver closed before its answer was complete: 503
  UpstreamTimeout,      // the apiserver did not answer in time: 504
  BadUpstreamResponse,  // the apiserver's response could not be parsed: 502
  ShuttingDown,         // the hub is draining after SIGTERM: 503
  Unauthorized,         // HTTPS proxy port without credentials: 401
  NotFound,             // offline: the object or resource is not in the cache: 404
  Expired,              // offline: a continue token the cache cannot resume: 410
  Offline,              // offline: a request only the apiserver can answer (writes): 503
  NotAcceptable,        // offline: an Accept the hub's JSON answer does not meet (CBOR only): 406
  FiltersNotReady,      // a filtered request before the filters' informers synced: 429
  // The offline write journal (docs/offline-semantics.md):
  Conflict,  // an offline update based on another resourceVersion, or a uid precondition: 409
  Invalid,   // an offline patch that cannot be applied to the cached object: 422
  UnsupportedMediaType,  // an offline patch of a type the hub cannot apply: 415
  JournalFull,           // the journal is at its bound: 503
  ReplayPending,         // online, but this object's offline writes are still being replayed: 503
  // The multiplexer port, where a leader hub feeds its pool's followers (docs/pool-sharing.md):
  Forbidden,     // not a node of this pool, or not a list/watch of a pool-scope resource: 403
  NotFitToLead,  // this hub has lost the cloud, or its shared copy is not synced: 503
};

// One of Status.details.causes: a field's error, as errors.NewInvalid lists it (`reason` is the
// field.ErrorType, e.g. "FieldValueForbidden"; `message` the error's body; `field` its path).
struct StatusCause {
  std::string reason;
  std::string message;
  std::string field;
};

// Status.details as kube-apiserver fills it: the object's name, its API group and, in `kind`,
// the plural resource ("pods"), not the Kind (but for Invalid, whose `kind` is the Kind), and the
// causes of an Invalid. Empty members are left out of the body.
struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;
  std::vector<StatusCause> causes = {};
};

struct ApiError {
  unsigned code = 500;
  std::string reason;   // Kubernetes StatusReason, e.g. "ServiceUnavailable"
  std::string message;  // human-readable, says what happened and where
  StatusDetails details = {};
};

// Maps a failure to its code and reason; `detail` becomes (part of) the message.
ApiError api_error(Failure failure, std::string_view detail);

// Errors the hub gives in the apiserver's place while offline, worded as kube-apiserver words
// them (k8s.io/apimachinery/pkg/api/errors), so that clients react as they would online.
//   forbidden:      `<resource>[.<group>] ["<name>"] is forbidden: <why>`, 403 Forbidden
//   already_exists: `<resource>[.<group>] "<name>" already exists`, 409 AlreadyExists
//   not_found:      `<resource>[.<group>] "<name>" not found`, 404 NotFound
//   bad_request:    the message as given, 400 BadRequest (no details)
ApiError forbidden_error(const StatusDetails& object, std::string_view why);
ApiError already_exists_error(const StatusDetails& object);
ApiError not_found_error(const StatusDetails& object);
ApiError bad_request_error(std::string message);
// errors.NewInvalid: 422 Invalid, `<Kind>[.<group>] "<name>" is invalid: <causes>`, each cause
// rendered `<field>: <message>`, several in brackets joined by ", " (field.ErrorList's aggregate).
ApiError invalid_error(std::string_view group, std::string_view kind, std::string_view name,
                       std::vector<StatusCause> causes);

// The compact Status JSON for an error.
std::string status_body(const ApiError& error);

// A watch stream's ERROR event carrying the error's Status, newline-terminated as the apiserver
// frames JSON watch events: `{"type":"ERROR","object":{"kind":"Status",...}}`.
std::string watch_error_event(const ApiError& error);

// A short name for metrics labels ("no_healthy_server", ...).
const char* failure_label(Failure failure);

}  // namespace yurthub::kube
