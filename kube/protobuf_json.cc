// Protobuf Leases and CSINodes rendered as JSON; see protobuf_json.h. Member order and omission
// follow the Go types' json tags (k8s.io/apimachinery ObjectMeta, OwnerReference; k8s.io/api
// coordination/v1 LeaseSpec, storage/v1 CSINodeSpec, CSINodeDriver, VolumeNodeResources).
#include "kube/protobuf_json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "kube/protobuf_wire.h"

namespace yurthub::kube {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void string(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
void key(Writer& w, std::string_view k) { string(w, k); }
void member(Writer& w, std::string_view k, std::string_view v) {
  key(w, k);
  string(w, v);
}
// A `json:",omitempty"` string member.
void optional_member(Writer& w, std::string_view k, std::string_view v) {
  if (!v.empty()) member(w, k, v);
}

// A map<string,string>: the last of a repeated key wins (protobuf's map semantics), each key
// written once where it first appeared.
void string_map(Writer& w, std::string_view k,
                const std::vector<std::pair<std::string, std::string>>& entries) {
  if (entries.empty()) return;  // omitempty
  key(w, k);
  w.StartObject();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    bool seen_before = false;
    for (std::size_t j = 0; j < i && !seen_before; ++j)
      seen_before = entries[j].first == entries[i].first;
    if (seen_before) continue;
    std::string_view value = entries[i].second;
    for (std::size_t j = i + 1; j < entries.size(); ++j) {
      if (entries[j].first == entries[i].first) value = entries[j].second;
    }
    member(w, entries[i].first, value);
  }
  w.EndObject();
}

void object_meta(Writer& w, const ObjectMetaFields& m) {
  key(w, "metadata");
  w.StartObject();
  optional_member(w, "name", m.name);
  optional_member(w, "generateName", m.generate_name);
  optional_member(w, "namespace", m.namespace_name);
  optional_member(w, "uid", m.uid);
  optional_member(w, "resourceVersion", m.resource_version);
  key(w, "creationTimestamp");  // metav1.Time is a struct: never omitted, null when zero
  if (m.creation_timestamp)
    string(w, *m.creation_timestamp);
  else
    w.Null();
  string_map(w, "labels", m.labels);
  string_map(w, "annotations", m.annotations);
  if (!m.owner_references.empty()) {
    key(w, "ownerReferences");
    w.StartArray();
    for (const auto& o : m.owner_references) {
      w.StartObject();
      member(w, "apiVersion", o.api_version);
      member(w, "kind", o.kind);
      member(w, "name", o.name);
      member(w, "uid", o.uid);
      if (o.controller) {
        key(w, "controller");
        w.Bool(*o.controller);
      }
      if (o.block_owner_deletion) {
        key(w, "blockOwnerDeletion");
        w.Bool(*o.block_owner_deletion);
      }
      w.EndObject();
    }
    w.EndArray();
  }
  if (!m.finalizers.empty()) {
    key(w, "finalizers");
    w.StartArray();
    for (const auto& f : m.finalizers) string(w, f);
    w.EndArray();
  }
  w.EndObject();
}

void lease_spec(Writer& w, const LeaseFields& lease) {
  key(w, "spec");
  w.StartObject();
  if (lease.holder_identity) member(w, "holderIdentity", *lease.holder_identity);
  if (lease.lease_duration_seconds) {
    key(w, "leaseDurationSeconds");
    w.Int(*lease.lease_duration_seconds);
  }
  if (lease.acquire_time) member(w, "acquireTime", *lease.acquire_time);
  if (lease.renew_time) member(w, "renewTime", *lease.renew_time);
  if (lease.lease_transitions) {
    key(w, "leaseTransitions");
    w.Int(*lease.lease_transitions);
  }
  w.EndObject();
}

void string_list_or_null(Writer& w, std::string_view k, const std::vector<std::string>& list) {
  key(w, k);
  if (list.empty()) {  // a nil slice without omitempty
    w.Null();
    return;
  }
  w.StartArray();
  for (const auto& s : list) string(w, s);
  w.EndArray();
}

void csinode_spec(Writer& w, const CSINodeFields& csinode) {
  key(w, "spec");
  w.StartObject();
  key(w, "drivers");
  if (csinode.drivers.empty()) {
    w.Null();
  } else {
    w.StartArray();
    for (const auto& d : csinode.drivers) {
      w.StartObject();
      member(w, "name", d.name);
      member(w, "nodeID", d.node_id);
      string_list_or_null(w, "topologyKeys", d.topology_keys);
      if (d.has_allocatable) {
        key(w, "allocatable");
        w.StartObject();
        if (d.allocatable_count) {
          key(w, "count");
          w.Int(*d.allocatable_count);
        }
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

struct Readable {
  std::string_view kind;
  bool (*render)(std::string_view raw, Writer& w);
};

bool render_lease(std::string_view raw, Writer& w) {
  auto lease = decode_lease(raw);
  if (!lease) return false;
  object_meta(w, lease->metadata);
  lease_spec(w, *lease);
  return true;
}

bool render_csinode(std::string_view raw, Writer& w) {
  auto csinode = decode_csinode(raw);
  if (!csinode) return false;
  object_meta(w, csinode->metadata);
  csinode_spec(w, *csinode);
  return true;
}

constexpr Readable kReadable[] = {{"Lease", render_lease}, {"CSINode", render_csinode}};

const Readable* readable(std::string_view kind) {
  for (const Readable& r : kReadable) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

}  // namespace

bool protobuf_kind_readable(std::string_view kind) { return readable(kind) != nullptr; }

Result<std::string> protobuf_object_json(std::string_view body, std::string_view expected_kind,
                                         std::string_view expected_api_version) {
  const Readable* reader = readable(expected_kind);
  if (reader == nullptr) {
    return make_error(ErrorCode::NotFound,
                      "the hub cannot read " + std::string(expected_kind) + " objects as protobuf");
  }
  auto envelope = unwrap_protobuf(body);
  if (!envelope) return make_error(ErrorCode::InvalidArgument, "the body is not protobuf");
  // client-go writes the type it encoded; an empty one is taken as the URL's.
  if ((!envelope->kind.empty() && envelope->kind != expected_kind) ||
      (!envelope->api_version.empty() && envelope->api_version != expected_api_version)) {
    return make_error(ErrorCode::InvalidArgument, "the body holds a " + envelope->api_version +
                                                      " " + envelope->kind + ", not a " +
                                                      std::string(expected_api_version) + " " +
                                                      std::string(expected_kind));
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  member(w, "kind", expected_kind);
  member(w, "apiVersion", expected_api_version);
  if (!reader->render(envelope->raw, w)) {
    return make_error(ErrorCode::InvalidArgument,
                      "the " + std::string(expected_kind) + " in the body cannot be read");
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace yurthub::kube
