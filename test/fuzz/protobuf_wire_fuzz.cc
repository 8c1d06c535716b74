// Fuzz target for kube/protobuf_wire.h, which reads kubelet's protobuf request bodies offline
// (leases, TokenRequests, events, nodes, CSINodes), and for cache/token_keeper.h's readers of a
// TokenRequest (read_token_request, protobuf and JSON) and of the apiserver's answer (jwt_expiry,
// parse_rfc3339), and for kube/protobuf_json.h, which renders a Lease or CSINode body as the JSON
// the offline write applies. The input is the body; it is also read as a bare message (a "k8s\0"
// envelope's raw content) and as text. Oracles: nothing decoded is longer than the input (every
// string is a piece of it, never read past its end), a decoded lease's times are RFC 3339 that
// parse_rfc3339 reads back, a key read from the body is read the same way twice, and a rendered
// object is JSON that parses, with the kind asked for.
#include "kube/protobuf_wire.h"

#include <rapidjson/document.h>

#include "base/json_parse.h"
#include "kube/protobuf_json.h"

#include <algorithm>
#include <cctype>

#include "cache/token_keeper.h"
#include "kube/request_info.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

void check_meta(const kube::ObjectMetaFields& meta, std::size_t size) {
  for (const std::string* s :
       {&meta.name, &meta.generate_name, &meta.namespace_name, &meta.uid, &meta.resource_version}) {
    fuzz::check(s->size() <= size, "a metadata field longer than the body");
  }
  fuzz::check(meta.owner_references.size() <= size, "more owner references than bytes");
  fuzz::check(meta.labels.size() + meta.annotations.size() + meta.finalizers.size() <= size,
              "more map entries than bytes");
}

void check_time(const std::optional<std::string>& time) {
  if (!time) return;
  // Times in the years 0..9999 with nanos in range format as RFC 3339 with six fraction digits
  // (others are no time a client sends, and are written as they come).
  const bool plain = time->size() == 27 && std::isdigit(static_cast<unsigned char>((*time)[0])) &&
                     std::all_of(time->begin() + 20, time->begin() + 26, [](char c) {
                       return std::isdigit(static_cast<unsigned char>(c));
                     });
  if (plain) {
    fuzz::check(cache::parse_rfc3339(*time).has_value(), "a lease time that does not read back");
  }
}

void decode_all(std::string_view message, std::size_t size) {
  if (auto meta = kube::decode_object_metadata(message)) check_meta(*meta, size);
  if (auto lease = kube::decode_lease(message)) {
    check_meta(lease->metadata, size);
    check_time(lease->acquire_time);
    check_time(lease->renew_time);
    fuzz::check(!lease->holder_identity || lease->holder_identity->size() <= size,
                "a holder identity longer than the body");
  }
  if (auto csinode = kube::decode_csinode(message)) {
    check_meta(csinode->metadata, size);
    fuzz::check(csinode->drivers.size() <= size, "more drivers than bytes");
  }
  if (auto token = kube::decode_token_request(message)) {
    fuzz::check(token->audiences.size() <= size, "more audiences than bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = fuzz::as_text(data, size);
  if (auto envelope = kube::unwrap_protobuf(in)) {
    fuzz::check(envelope->raw.size() <= size && envelope->kind.size() <= size,
                "an envelope longer than the body");
    decode_all(envelope->raw, size);
  }
  for (auto [kind, api_version] :
       {std::pair{"Lease", "coordination.k8s.io/v1"}, std::pair{"CSINode", "storage.k8s.io/v1"}}) {
    auto json = kube::protobuf_object_json(in, kind, api_version);
    if (!json) continue;
    rapidjson::Document doc;
    fuzz::check(base::parse_json(*json, doc).ok() && doc.IsObject() && doc.HasMember("kind") &&
                    doc["kind"] == kind,
                "a rendered object that is not JSON of its kind");
  }
  decode_all(in, size);

  const kube::RequestInfo info = kube::classify_request(
      "POST", "/api/v1/namespaces/default/serviceaccounts/default/token", "kubelet/v1.26.15");
  for (const char* type : {"application/vnd.kubernetes.protobuf", "application/json"}) {
    auto key = cache::read_token_request(info, type, in);
    if (!key) continue;
    auto again = cache::read_token_request(info, type, in);
    fuzz::check(again && again->digest() == key->digest(), "a TokenRequest read two ways");
  }
  (void)cache::jwt_expiry(in);
  (void)cache::parse_rfc3339(in);
  return 0;
}
