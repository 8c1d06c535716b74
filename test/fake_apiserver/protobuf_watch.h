// Watch events in kube-apiserver's protobuf framing (`application/vnd.kubernetes.protobuf;
// stream=watch`, watch-protobuf.stream in the v1.26 captures): each event a 4-byte big-endian
// length, then a metav1.WatchEvent {type = 1, object = 2: RawExtension {raw = 1}} whose raw is
// the object's protobuf: "k8s\0", then runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2},
// raw = 2, contentEncoding = 3, contentType = 4}. The fake encodes objects with their metadata
// only (ObjectMeta, field 1 of every kind: name, namespace, uid, resourceVersion, labels,
// annotations): it has no typed schema, and the streaming lists the tests read that way need no
// more (a bookmark is exactly that). The fake's own encoder; the hub reads no protobuf watches.
#pragma once

#include <string>
#include <string_view>

namespace yurthub::fake {

// Whether a watch's Accept header takes protobuf and nothing the fake answers with otherwise (no
// JSON, no */*): only such a client is sent protobuf (kubelet's `protobuf,json` gets JSON).
bool wants_protobuf_watch(std::string_view accept);

// The frame of one JSON watch event (`{"type":T,"object":{...}}`, as watch.h writes it) of an
// object of `kind` and `api_version`. An ERROR event's Status goes as an empty v1 Status.
std::string protobuf_watch_frame(std::string_view kind, std::string_view api_version,
                                 const std::string& event_json);

}  // namespace yurthub::fake
