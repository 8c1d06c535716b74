// kubelet's protobuf request bodies for the integration tests, written field by field as
// client-go's generated (gogo) code writes them: every non-pointer field, even empty, in field
// order, behind the "k8s\0" runtime.Unknown envelope. The lease, TokenRequest and CSINode forms are
// checked byte for byte against bodies Debian's protoc made from upstream's .proto files
// (test/testdata/protobuf), so the hub's decoder is never tested only against this encoder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yurthub::test {

struct OwnerRef {
  std::string kind, name, uid, api_version;
};

struct LeaseBody {
  std::string name, namespace_name, uid, resource_version;
  std::int64_t created_seconds = 0;  // 0: never created (a create)
  std::vector<OwnerRef> owners;
  std::string holder;
  std::int32_t duration_seconds = 0;
  std::int64_t renew_seconds = 0;
  std::int32_t renew_nanos = 0;
};
std::string lease_body(const LeaseBody& lease);

struct TokenRequestBody {
  std::vector<std::string> audiences;
  std::int64_t expiration_seconds = 0;
  std::string bound_kind, bound_api_version, bound_name, bound_uid;
};
std::string token_request_body(const TokenRequestBody& request);

// storage.k8s.io/v1 CSINode, as kubelet's CSI node-info manager creates and updates it.
struct CSINodeDriverBody {
  std::string name, node_id;
  std::vector<std::string> topology_keys;
  std::optional<std::int32_t> allocatable_count;
};
struct CSINodeBody {
  std::string name, uid, resource_version;
  std::int64_t created_seconds = 0;
  std::vector<std::pair<std::string, std::string>> labels, annotations;  // written sorted by key
  std::vector<OwnerRef> owners;
  std::vector<CSINodeDriverBody> drivers;
};
std::string csinode_body(const CSINodeBody& csinode);

// An object with only its metadata (name, namespace): enough for a node registration or an
// event as far as the hub reads them; a real kubelet sends more, which the hub skips.
std::string named_object_body(const std::string& api_version, const std::string& kind,
                              const std::string& name, const std::string& namespace_name);

// One event of a protobuf watch stream (`application/vnd.kubernetes.protobuf;stream=watch`: a
// 4-byte big-endian length, then a metav1.WatchEvent whose object is "k8s\0" + runtime.Unknown),
// as far as the tests read it: its type, the object's kind and metadata (ObjectMeta, field 1 of
// every kind).
struct ProtobufWatchEvent {
  std::string type, api_version, kind;
  std::string name, namespace_name, resource_version;
  std::vector<std::pair<std::string, std::string>> annotations;
};
// The whole events in `stream` (a partial last frame is left out); nullopt when a frame does not
// read as a WatchEvent.
std::optional<std::vector<ProtobufWatchEvent>> read_protobuf_watch(const std::string& stream);

}  // namespace yurthub::test
