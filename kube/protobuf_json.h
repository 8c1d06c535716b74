// The JSON form of the protobuf objects a node writes that the hub must apply while offline: a
// Lease (kubelet's heartbeat, PUT every 10 s and POST when missing) and a CSINode (created at
// kubelet's start, updated when a CSI driver registers). kubelet sends every create and update as
// `application/vnd.kubernetes.protobuf`; the cache keeps JSON, so such a body is rendered as
// kube-apiserver's JSON serializer would render the decoded object (Go's encoding/json: struct
// field order, omitempty members left out, a nil slice as null), then applied as a JSON create or
// update. Anything else a protobuf body may hold is refused by the caller (415): the hub does not
// guess at types it cannot decode. Pure; called by cache/offline_writes.cc and
// cache/offline_creates.cc.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::kube {

// Whether protobuf_object_json() reads objects of this kind ("Lease", "CSINode").
bool protobuf_kind_readable(std::string_view kind);

// The JSON object in `body` (a "k8s\0" envelope), with its kind and apiVersion first. Errors:
// InvalidArgument when the body is not a readable envelope of the kind and apiVersion
// `expected_kind` and `expected_api_version` name (the resource of the URL it was sent to), or
// NotFound when `expected_kind` is not one protobuf_kind_readable() reads.
Result<std::string> protobuf_object_json(std::string_view body, std::string_view expected_kind,
                                         std::string_view expected_api_version);

}  // namespace yurthub::kube
