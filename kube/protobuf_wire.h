// Reading the few fields the hub needs from Kubernetes protobuf bodies
// (`application/vnd.kubernetes.protobuf`), which kubelet sends for every create and update: the
// "k8s\0" envelope (runtime.Unknown), an object's identity in ObjectMeta, a Lease's spec and a
// TokenRequest's spec. Field numbers are those of k8s.io/api's and k8s.io/apimachinery's
// generated.proto (test/testdata/protobuf has bodies encoded from them by protoc). This is not a
// protobuf library: unknown fields are skipped, nothing is re-encoded. Pure; every function is
// bounded by its input's size and never recurses deeper than the message types it knows. Used by
// the offline write path (cache/offline_*.cc) and the token keeper.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yurthub::kube {

// One pass over the fields of one protobuf message.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : rest_(bytes) {}

  // Moves to the next field; false at the end, or when the bytes are not protobuf (failed()).
  bool next();
  bool failed() const { return failed_; }

  std::uint32_t field() const { return field_; }
  bool is_varint() const { return type_ == 0; }
  bool is_bytes() const { return type_ == 2; }  // strings, bytes and embedded messages
  std::uint64_t varint() const { return varint_; }
  std::string_view bytes() const { return bytes_; }

 private:
  std::string_view rest_;
  std::uint32_t field_ = 0;
  int type_ = -1;
  std::uint64_t varint_ = 0;
  std::string_view bytes_;
  bool failed_ = false;
};

// The media type kubelet and other client-go users send protobuf bodies as.
inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

// runtime.Unknown after the "k8s\0" magic: the object's type and its serialized message.
struct ProtobufEnvelope {
  std::string api_version;
  std::string kind;
  std::string_view raw;  // into the body
};
// nullopt when `body` is not such an envelope, or its content is encoded (contentEncoding set).
std::optional<ProtobufEnvelope> unwrap_protobuf(std::string_view body);

struct OwnerReferenceFields {
  std::string api_version, kind, name, uid;
  std::optional<bool> controller, block_owner_deletion;
};

// What the hub reads of an ObjectMeta: what a client sets (the server-set rest, generation,
// deletion and managedFields, is skipped). Maps keep the wire's order; a repeated key is written
// again, and the last one wins, as in protobuf's own map semantics.
struct ObjectMetaFields {
  std::string name, generate_name, namespace_name, uid, resource_version;
  std::optional<std::string> creation_timestamp;  // RFC 3339, whole seconds, as metav1.Time
  std::vector<std::pair<std::string, std::string>> labels, annotations;
  std::vector<OwnerReferenceFields> owner_references;
  std::vector<std::string> finalizers;
};
std::optional<ObjectMetaFields> decode_object_meta(std::string_view message);
// The metadata (field 1, as in every Kubernetes object) of an object's message.
std::optional<ObjectMetaFields> decode_object_metadata(std::string_view object);

// coordination.k8s.io/v1 Lease. Times are RFC 3339 with microseconds, as metav1.MicroTime
// writes them in JSON ("2026-11-23T10:00:05.123456Z").
struct LeaseFields {
  ObjectMetaFields metadata;
  std::optional<std::string> holder_identity;
  std::optional<std::int32_t> lease_duration_seconds;
  std::optional<std::string> acquire_time;
  std::optional<std::string> renew_time;
  std::optional<std::int32_t> lease_transitions;
};
std::optional<LeaseFields> decode_lease(std::string_view object);

// storage.k8s.io/v1 CSINode: kubelet's CSI node-info manager creates it at start and updates it
// (PUT, protobuf) when a CSI driver registers or its migrated-plugins annotation changes.
struct CSINodeDriverFields {
  std::string name, node_id;
  std::vector<std::string> topology_keys;
  std::optional<std::int32_t> allocatable_count;  // spec.drivers[].allocatable.count
  bool has_allocatable = false;                   // allocatable present, even without a count
};
struct CSINodeFields {
  ObjectMetaFields metadata;
  std::vector<CSINodeDriverFields> drivers;
};
std::optional<CSINodeFields> decode_csinode(std::string_view object);

// authentication.k8s.io/v1 TokenRequest's spec.
struct TokenRequestFields {
  std::vector<std::string> audiences;
  std::optional<std::int64_t> expiration_seconds;
  std::optional<std::string> bound_kind, bound_api_version, bound_name, bound_uid;
};
std::optional<TokenRequestFields> decode_token_request(std::string_view object);

// metav1.Time / metav1.MicroTime {seconds, nanos} in JSON's form: whole seconds for Time,
// six fraction digits for MicroTime.
std::string format_time(std::int64_t seconds, std::int32_t nanos, bool micro);

}  // namespace yurthub::kube
