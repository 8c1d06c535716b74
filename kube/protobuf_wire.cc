// Kubernetes protobuf bodies, the few fields the hub reads; see protobuf_wire.h. Field numbers
// from k8s.io/apimachinery pkg/runtime/generated.proto (Unknown, TypeMeta), pkg/apis/meta/v1
// (ObjectMeta, OwnerReference, Time, MicroTime), k8s.io/api coordination/v1 (Lease, LeaseSpec),
// storage/v1 (CSINode, CSINodeSpec, CSINodeDriver, VolumeNodeResources) and authentication/v1
// (TokenRequest, TokenRequestSpec, BoundObjectReference).
#include "kube/protobuf_wire.h"

#include <cstdio>
#include <ctime>

namespace yurthub::kube {
namespace {

constexpr std::string_view kMagic{"k8s\0", 4};

// Years 0001 to 9999, as Go's time.Time marshals them.
constexpr std::int64_t kMinSeconds = -62135596800;
constexpr std::int64_t kMaxSeconds = 253402300799;

bool read_varint(std::string_view& in, std::uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    out |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;  // more than ten bytes
}

std::string text(const WireReader& r) { return std::string(r.bytes()); }

// A Time or MicroTime message; nullopt when malformed or out of range.
std::optional<std::string> decode_time(std::string_view message, bool micro) {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
  WireReader r(message);
  while (r.next()) {
    if (r.field() == 1 && r.is_varint()) seconds = static_cast<std::int64_t>(r.varint());
    if (r.field() == 2 && r.is_varint()) nanos = static_cast<std::int32_t>(r.varint());
  }
  if (r.failed() || seconds < kMinSeconds || seconds > kMaxSeconds || nanos < 0 ||
      nanos > 999'999'999) {
    return std::nullopt;
  }
  return format_time(seconds, static_cast<std::int32_t>(nanos), micro);
}

std::optional<OwnerReferenceFields> decode_owner_reference(std::string_view message) {
  OwnerReferenceFields o;
  WireReader r(message);
  while (r.next()) {
    if (r.is_bytes()) {
      switch (r.field()) {
        case 1:
          o.kind = text(r);
          break;
        case 3:
          o.name = text(r);
          break;
        case 4:
          o.uid = text(r);
          break;
        case 5:
          o.api_version = text(r);
          break;
      }
    } else if (r.is_varint()) {
      if (r.field() == 6) o.controller = r.varint() != 0;
      if (r.field() == 7) o.block_owner_deletion = r.varint() != 0;
    }
  }
  if (r.failed()) return std::nullopt;
  return o;
}

// The one embedded message `field` of `object` ("" when absent); nullopt when malformed.
std::optional<std::string_view> embedded(std::string_view object, std::uint32_t field) {
  std::string_view found;
  WireReader r(object);
  while (r.next()) {
    if (r.field() == field && r.is_bytes()) found = r.bytes();
  }
  if (r.failed()) return std::nullopt;
  return found;
}

// One entry of a map<string, string>: {1: key, 2: value}.
std::optional<std::pair<std::string, std::string>> decode_map_entry(std::string_view message) {
  std::pair<std::string, std::string> entry;
  WireReader r(message);
  while (r.next()) {
    if (r.field() == 1 && r.is_bytes()) entry.first = text(r);
    if (r.field() == 2 && r.is_bytes()) entry.second = text(r);
  }
  if (r.failed()) return std::nullopt;
  return entry;
}

std::optional<CSINodeDriverFields> decode_csinode_driver(std::string_view message) {
  CSINodeDriverFields d;
  WireReader r(message);
  while (r.next()) {
    if (!r.is_bytes()) continue;
    if (r.field() == 1) d.name = text(r);
    if (r.field() == 2) d.node_id = text(r);
    if (r.field() == 3) d.topology_keys.push_back(text(r));
    if (r.field() == 4) {
      d.has_allocatable = true;
      WireReader resources(r.bytes());
      while (resources.next()) {
        if (resources.field() == 1 && resources.is_varint())
          d.allocatable_count = static_cast<std::int32_t>(resources.varint());
      }
      if (resources.failed()) return std::nullopt;
    }
  }
  if (r.failed()) return std::nullopt;
  return d;
}

}  // namespace

bool WireReader::next() {
  if (failed_ || rest_.empty()) return false;
  std::uint64_t key = 0;
  if (!read_varint(rest_, key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
    failed_ = true;
    return false;
  }
  field_ = static_cast<std::uint32_t>(key >> 3);
  type_ = static_cast<int>(key & 7);
  varint_ = 0;
  bytes_ = {};
  std::uint64_t length = 0;
  switch (type_) {
    case 0:
      failed_ = !read_varint(rest_, varint_);
      break;
    case 1:
    case 5:
      length = type_ == 1 ? 8 : 4;
      failed_ = rest_.size() < length;
      if (!failed_) rest_.remove_prefix(length);
      break;
    case 2:
      failed_ = !read_varint(rest_, length) || length > rest_.size();
      if (!failed_) {
        bytes_ = rest_.substr(0, length);
        rest_.remove_prefix(length);
      }
      break;
    default:  // groups (3, 4) are not used by Kubernetes; 6 and 7 do not exist
      failed_ = true;
  }
  return !failed_;
}

std::optional<ProtobufEnvelope> unwrap_protobuf(std::string_view body) {
  if (!body.starts_with(kMagic)) return std::nullopt;
  ProtobufEnvelope envelope;
  bool has_raw = false;
  WireReader r(body.substr(kMagic.size()));
  while (r.next()) {
    if (!r.is_bytes()) continue;
    if (r.field() == 1) {
      WireReader type(r.bytes());
      while (type.next()) {
        if (type.field() == 1 && type.is_bytes()) envelope.api_version = text(type);
        if (type.field() == 2 && type.is_bytes()) envelope.kind = text(type);
      }
      if (type.failed()) return std::nullopt;
    } else if (r.field() == 2) {
      envelope.raw = r.bytes();
      has_raw = true;
    } else if (r.field() == 3 && !r.bytes().empty()) {
      return std::nullopt;  // contentEncoding: the raw bytes are compressed; never sent by
                            // client-go
    }
  }
  if (r.failed() || !has_raw) return std::nullopt;
  return envelope;
}

std::optional<ObjectMetaFields> decode_object_meta(std::string_view message) {
  ObjectMetaFields m;
  WireReader r(message);
  while (r.next()) {
    if (!r.is_bytes()) continue;
    switch (r.field()) {
      case 1:
        m.name = text(r);
        break;
      case 2:
        m.generate_name = text(r);
        break;
      case 3:
        m.namespace_name = text(r);
        break;
      case 5:
        m.uid = text(r);
        break;
      case 6:
        m.resource_version = text(r);
        break;
      case 8: {
        auto time = decode_time(r.bytes(), false);
        if (!time) return std::nullopt;
        // Go writes a zero Time as an empty message, which JSON renders as null.
        if (!r.bytes().empty()) m.creation_timestamp = std::move(*time);
        break;
      }
      case 11:
      case 12: {
        auto entry = decode_map_entry(r.bytes());
        if (!entry) return std::nullopt;
        (r.field() == 11 ? m.labels : m.annotations).push_back(std::move(*entry));
        break;
      }
      case 13: {
        auto owner = decode_owner_reference(r.bytes());
        if (!owner) return std::nullopt;
        m.owner_references.push_back(std::move(*owner));
        break;
      }
      case 14:
        m.finalizers.push_back(text(r));
        break;
    }
  }
  if (r.failed()) return std::nullopt;
  return m;
}

std::optional<ObjectMetaFields> decode_object_metadata(std::string_view object) {
  auto metadata = embedded(object, 1);
  if (!metadata) return std::nullopt;
  return decode_object_meta(*metadata);
}

std::optional<LeaseFields> decode_lease(std::string_view object) {
  auto metadata = decode_object_metadata(object);
  auto spec = embedded(object, 2);
  if (!metadata || !spec) return std::nullopt;
  LeaseFields lease{std::move(*metadata), {}, {}, {}, {}, {}};
  WireReader r(*spec);
  while (r.next()) {
    if (r.is_bytes()) {
      if (r.field() == 1) lease.holder_identity = text(r);
      if (r.field() == 3 || r.field() == 4) {
        auto time = decode_time(r.bytes(), true);
        if (!time) return std::nullopt;
        (r.field() == 3 ? lease.acquire_time : lease.renew_time) = std::move(*time);
      }
    } else if (r.is_varint()) {
      if (r.field() == 2) lease.lease_duration_seconds = static_cast<std::int32_t>(r.varint());
      if (r.field() == 5) lease.lease_transitions = static_cast<std::int32_t>(r.varint());
    }
  }
  if (r.failed()) return std::nullopt;
  return lease;
}

std::optional<CSINodeFields> decode_csinode(std::string_view object) {
  auto metadata = decode_object_metadata(object);
  auto spec = embedded(object, 2);
  if (!metadata || !spec) return std::nullopt;
  CSINodeFields csinode{std::move(*metadata), {}};
  WireReader r(*spec);
  while (r.next()) {
    if (r.field() != 1 || !r.is_bytes()) continue;
    auto driver = decode_csinode_driver(r.bytes());
    if (!driver) return std::nullopt;
    csinode.drivers.push_back(std::move(*driver));
  }
  if (r.failed()) return std::nullopt;
  return csinode;
}

std::optional<TokenRequestFields> decode_token_request(std::string_view object) {
  auto spec = embedded(object, 2);
  if (!spec) return std::nullopt;
  TokenRequestFields t;
  WireReader r(*spec);
  while (r.next()) {
    if (r.field() == 1 && r.is_bytes()) t.audiences.push_back(text(r));
    if (r.field() == 4 && r.is_varint())
      t.expiration_seconds = static_cast<std::int64_t>(r.varint());
    if (r.field() == 3 && r.is_bytes()) {
      WireReader ref(r.bytes());
      while (ref.next()) {
        if (!ref.is_bytes()) continue;
        if (ref.field() == 1) t.bound_kind = text(ref);
        if (ref.field() == 2) t.bound_api_version = text(ref);
        if (ref.field() == 3) t.bound_name = text(ref);
        if (ref.field() == 4) t.bound_uid = text(ref);
      }
      if (ref.failed()) return std::nullopt;
    }
  }
  if (r.failed()) return std::nullopt;
  return t;
}

std::string format_time(std::int64_t seconds, std::int32_t nanos, bool micro) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[48];
  int n = std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (micro)
    n += std::snprintf(out + n, sizeof out - static_cast<std::size_t>(n), ".%06d", nanos / 1000);
  return std::string(out, static_cast<std::size_t>(n)) + "Z";
}

}  // namespace yurthub::kube
