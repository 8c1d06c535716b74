// Just enough of the Kubernetes protobuf encoding to read what `kubectl certificate approve`
// sends: kubectl 1.32 writes the approval PUT with its typed clientset, as
// application/vnd.kubernetes.protobuf (the "k8s\0" magic, a runtime.Unknown envelope, then the
// generated CertificateSigningRequest message). The fake is JSON-only elsewhere; this decodes the
// fields an approval update reads (metadata name, uid, resourceVersion; status.conditions) into
// the JSON the rest of the fake handles. Called by csr_handlers.cc. Pure.
#pragma once

#include <string_view>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::fake {

// {"metadata":{...},"status":{"conditions":[...]}} from a protobuf CertificateSigningRequest.
// Zero timestamps are left out (the apiserver fills them). Errors name what is malformed.
Result<rapidjson::Document> decode_csr_protobuf(std::string_view body);

}  // namespace yurthub::fake
