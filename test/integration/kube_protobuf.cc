// kubelet's protobuf bodies; see kube_protobuf.h. Field numbers from k8s.io/apimachinery
// (runtime.Unknown, meta/v1 ObjectMeta, OwnerReference, Time) and k8s.io/api (coordination/v1,
// authentication/v1, storage/v1).
#include "test/integration/kube_protobuf.h"

#include <algorithm>

namespace yurthub::test {
namespace {

void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void key(std::string& out, int field, int type) {
  varint(out, static_cast<std::uint64_t>(field << 3 | type));
}

void bytes(std::string& out, int field, const std::string& value) {
  key(out, field, 2);
  varint(out, value.size());
  out += value;
}

void number(std::string& out, int field, std::int64_t value) {
  key(out, field, 0);
  varint(out, static_cast<std::uint64_t>(value));
}

// metav1.Time / MicroTime: empty when zero, else seconds and nanos (nanos even when 0).
std::string time_message(std::int64_t seconds, std::int32_t nanos) {
  std::string t;
  if (seconds == 0 && nanos == 0) return t;
  number(t, 1, seconds);
  number(t, 2, nanos);
  return t;
}

using StringMap = std::vector<std::pair<std::string, std::string>>;

// map<string,string> field `field`: one entry message per pair, sorted by key (gogo's sortkeys).
void string_map(std::string& out, int field, StringMap entries) {
  std::sort(entries.begin(), entries.end());
  for (const auto& [k, v] : entries) {
    std::string entry;
    bytes(entry, 1, k);
    bytes(entry, 2, v);
    bytes(out, field, entry);
  }
}

std::string object_meta(const std::string& name, const std::string& namespace_name,
                        const std::string& uid, const std::string& rv, std::int64_t created,
                        const std::vector<OwnerRef>& owners, const StringMap& labels = {},
                        const StringMap& annotations = {}) {
  std::string m;
  bytes(m, 1, name);
  bytes(m, 2, "");  // generateName
  bytes(m, 3, namespace_name);
  bytes(m, 4, "");  // selfLink
  bytes(m, 5, uid);
  bytes(m, 6, rv);
  number(m, 7, 0);  // generation
  bytes(m, 8, time_message(created, 0));
  string_map(m, 11, labels);
  string_map(m, 12, annotations);
  for (const OwnerRef& o : owners) {
    std::string r;
    bytes(r, 1, o.kind);
    bytes(r, 3, o.name);
    bytes(r, 4, o.uid);
    bytes(r, 5, o.api_version);
    bytes(m, 13, r);
  }
  return m;
}

std::string envelope(const std::string& api_version, const std::string& kind,
                     const std::string& raw) {
  std::string type;
  bytes(type, 1, api_version);
  bytes(type, 2, kind);
  std::string out("k8s\0", 4);
  bytes(out, 1, type);
  bytes(out, 2, raw);
  bytes(out, 3, "");  // contentEncoding
  bytes(out, 4, "");  // contentType
  return out;
}

}  // namespace

std::string lease_body(const LeaseBody& l) {
  std::string spec;
  bytes(spec, 1, l.holder);
  number(spec, 2, l.duration_seconds);
  bytes(spec, 4, time_message(l.renew_seconds, l.renew_nanos));
  std::string lease;
  bytes(lease, 1,
        object_meta(l.name, l.namespace_name, l.uid, l.resource_version, l.created_seconds,
                    l.owners));
  bytes(lease, 2, spec);
  return envelope("coordination.k8s.io/v1", "Lease", lease);
}

std::string token_request_body(const TokenRequestBody& t) {
  std::string spec;
  for (const std::string& a : t.audiences) bytes(spec, 1, a);
  std::string ref;
  bytes(ref, 1, t.bound_kind);
  bytes(ref, 2, t.bound_api_version);
  bytes(ref, 3, t.bound_name);
  bytes(ref, 4, t.bound_uid);
  bytes(spec, 3, ref);
  number(spec, 4, t.expiration_seconds);
  std::string status;
  bytes(status, 1, "");  // token
  bytes(status, 2, "");  // expirationTimestamp (zero)
  std::string request;
  bytes(request, 1, object_meta("", "", "", "", 0, {}));
  bytes(request, 2, spec);
  bytes(request, 3, status);
  return envelope("authentication.k8s.io/v1", "TokenRequest", request);
}

std::string csinode_body(const CSINodeBody& c) {
  std::string spec;
  for (const CSINodeDriverBody& d : c.drivers) {
    std::string driver;
    bytes(driver, 1, d.name);
    bytes(driver, 2, d.node_id);
    for (const std::string& k : d.topology_keys) bytes(driver, 3, k);
    if (d.allocatable_count) {
      std::string resources;
      number(resources, 1, *d.allocatable_count);
      bytes(driver, 4, resources);
    }
    bytes(spec, 1, driver);
  }
  std::string csinode;
  bytes(csinode, 1,
        object_meta(c.name, "", c.uid, c.resource_version, c.created_seconds, c.owners, c.labels,
                    c.annotations));
  bytes(csinode, 2, spec);
  return envelope("storage.k8s.io/v1", "CSINode", csinode);
}

std::string named_object_body(const std::string& api_version, const std::string& kind,
                              const std::string& name, const std::string& namespace_name) {
  std::string object;
  bytes(object, 1, object_meta(name, namespace_name, "", "", 0, {}));
  return envelope(api_version, kind, object);
}

}  // namespace yurthub::test
