// Streaming lists (KEP-3157, "WatchList"): a watch with sendInitialEvents=true, which client-go's
// reflector sends instead of a LIST since v1.35 (its WatchListClient feature on by default). The
// answer is an ADDED event per object of the current state, then a BOOKMARK whose object carries
// the annotation `k8s.io/initial-events-end: "true"` at the state's resourceVersion, then the
// watch. The rules here are kube-apiserver's (apimachinery v0.27-v0.36 ValidateListOptions, the
// same text in every one of them; docs/offline-semantics.md, "Streaming lists"). Pure; called by
// the cache's taps and offline answers and by the pool's shared cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kube/request_info.h"
#include "kube/status.h"

namespace yurthub::kube {

// metav1.InitialEventsAnnotationKey.
inline constexpr std::string_view kInitialEventsEndAnnotation = "k8s.io/initial-events-end";

// A watch that asks for the initial events (sendInitialEvents=true).
inline bool is_streaming_list(const RequestInfo& info) {
  return info.verb == Verb::Watch && info.send_initial_events.value_or(false);
}

// The 422 Invalid a kube-apiserver with WatchList enabled (1.32, 1.34+) answers to these list or
// watch options (resourceVersionMatch and sendInitialEvents; causes and message as
// field.ErrorList renders them), nullopt when it takes them. Lists and watches only.
std::optional<ApiError> invalid_list_options(const RequestInfo& info);

// Whether a watch event's object (a BOOKMARK's) carries `k8s.io/initial-events-end: "true"`.
// Reads only its metadata.annotations; false for anything that is not such an object.
bool marks_initial_events_end(std::string_view object_json);

// The BOOKMARK that ends a streaming list's initial events, with its newline: an empty object of
// `kind` at `resource_version` with the annotation, as a ≥ 1.34 apiserver writes it (no
// creationTimestamp; the kind's empty spec and status are left out, which no decoder needs).
std::string initial_events_end_bookmark(std::string_view kind, std::string_view api_version,
                                        std::uint64_t resource_version);

}  // namespace yurthub::kube
