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

namespace {

// A reader of protobuf's wire format, for the length-delimited fields the watch stream has.
class Fields {
 public:
  explicit Fields(std::string_view bytes) : rest_(bytes) {}
  // The next field: its number, and its bytes when length-delimited (other wire types are
  // skipped). False at the end or on a malformed field (then ok() is false).
  bool next(unsigned& number, std::string_view& bytes) {
    while (!rest_.empty()) {
      std::uint64_t key = 0;
      if (!varint(key)) return fail();
      number = static_cast<unsigned>(key >> 3);
      const unsigned wire = key & 7;
      if (wire == 0) {
        std::uint64_t ignored = 0;
        if (!varint(ignored)) return fail();
        continue;
      }
      if (wire != 2) return fail();
      std::uint64_t length = 0;
      if (!varint(length) || length > rest_.size()) return fail();
      bytes = rest_.substr(0, length);
      rest_.remove_prefix(length);
      return true;
    }
    return false;
  }
  bool ok() const { return ok_; }

 private:
  bool varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && !rest_.empty(); shift += 7) {
      const auto byte = static_cast<unsigned char>(rest_.front());
      rest_.remove_prefix(1);
      v |= std::uint64_t{byte & 0x7fU} << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool fail() {
    ok_ = false;
    rest_ = {};
    return false;
  }
  std::string_view rest_;
  bool ok_ = true;
};

bool read_object(std::string_view raw, ProtobufWatchEvent& event) {
  if (raw.substr(0, 4) != std::string_view("k8s\0", 4)) return false;
  Fields unknown(raw.substr(4));
  unsigned number = 0;
  std::string_view bytes;
  while (unknown.next(number, bytes)) {
    if (number == 1) {  // typeMeta
      Fields type_meta(bytes);
      unsigned n = 0;
      std::string_view b;
      while (type_meta.next(n, b)) (n == 1 ? event.api_version : event.kind) = std::string(b);
    } else if (number == 2) {  // raw: the kind's message, metadata first
      Fields kind(bytes);
      unsigned n = 0;
      std::string_view meta_bytes;
      while (kind.next(n, meta_bytes)) {
        if (n != 1) continue;
        Fields meta(meta_bytes);
        unsigned m = 0;
        std::string_view v;
        while (meta.next(m, v)) {
          if (m == 1) event.name = v;
          if (m == 3) event.namespace_name = v;
          if (m == 6) event.resource_version = v;
          if (m == 12) {
            Fields entry(v);
            unsigned e = 0;
            std::string_view part;
            std::pair<std::string, std::string> kv;
            while (entry.next(e, part)) (e == 1 ? kv.first : kv.second) = std::string(part);
            event.annotations.push_back(std::move(kv));
          }
        }
      }
    }
  }
  return unknown.ok();
}

}  // namespace

std::optional<std::vector<ProtobufWatchEvent>> read_protobuf_watch(const std::string& stream) {
  std::vector<ProtobufWatchEvent> events;
  std::size_t at = 0;
  while (stream.size() - at >= 4) {
    const auto byte = [&](std::size_t i) {
      return static_cast<std::uint32_t>(static_cast<unsigned char>(stream[at + i]));
    };
    const std::uint32_t length = byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
    if (stream.size() - at - 4 < length) break;
    Fields watch_event(std::string_view(stream).substr(at + 4, length));
    at += 4 + length;
    ProtobufWatchEvent event;
    unsigned number = 0;
    std::string_view bytes;
    while (watch_event.next(number, bytes)) {
      if (number == 1) event.type = bytes;
      if (number == 2) {
        Fields raw_extension(bytes);
        unsigned n = 0;
        std::string_view raw;
        while (raw_extension.next(n, raw)) {
          if (n == 1 && !read_object(raw, event)) return std::nullopt;
        }
      }
    }
    if (!watch_event.ok() || event.type.empty()) return std::nullopt;
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace yurthub::test
