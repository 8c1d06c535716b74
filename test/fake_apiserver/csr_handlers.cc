// The REST side of certificatesigningrequests; see api_handlers.h and csr_validation.h. Create:
// generateName resolved first (the apiserver names the object before validating it, so errors
// carry the generated name), the caller stamped into spec, then validation (422 with causes).
// Approval: PUT or PATCH on .../certificatesigningrequests/NAME/approval, after commit_update's
// resourceVersion and uid preconditions. Approving and signing happen in controllers.cc.
#include <string>

#include "base/base64.h"
#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/csr_validation.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

constexpr std::string_view kKind = "CertificateSigningRequest";
constexpr std::string_view kGroup = "certificates.k8s.io";

// encoding/json's answer to a spec.request that is not base64: the offset of the first byte
// outside the alphabet (an approximation of Go's CorruptInputError offset for bad padding).
std::optional<std::size_t> bad_base64_at(const rapidjson::Value& doc) {
  auto spec = doc.FindMember("spec");
  if (spec == doc.MemberEnd() || !spec->value.IsObject()) return std::nullopt;
  auto req = spec->value.FindMember("request");
  if (req == spec->value.MemberEnd() || !req->value.IsString()) return std::nullopt;
  std::string text;
  for (char c : std::string_view(req->value.GetString(), req->value.GetStringLength())) {
    if (c != '\r' && c != '\n') text += c;
  }
  if (base::decode_base64(text)) return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '=';
    if (!ok) return i;
  }
  return text.size() / 4 * 4;
}

}  // namespace

Reply ApiHandlers::create_csr(const ApiRequest& req, rapidjson::Document doc) {
  strip_type_meta(doc);
  ensure_metadata(doc);
  if (auto at = bad_base64_at(doc)) {
    return bad_request(
        "CertificateSigningRequest in version \"v1\" cannot be handled as a "
        "CertificateSigningRequest: illegal base64 data at input byte " +
        std::to_string(*at));
  }
  std::string name = meta_string(doc, "name");
  std::string prefix = meta_string(doc, "generateName");
  if (name.empty() && !prefix.empty()) {
    name = prefix + random_suffix(5);
    set_meta_string(doc, "name", name);
  }
  prepare_csr_create(doc, req.user);
  auto causes = validate_csr_create(doc);
  if (name.empty()) {
    causes.insert(causes.begin(),
                  FieldCause{"FieldValueRequired",
                             "Required value: name or generateName is required", "metadata.name"});
  }
  if (!causes.empty()) return invalid_fields(kKind, kGroup, name, causes);
  return create_object(*req.resource, req.path.version, "", std::move(doc), false);
}

Reply ApiHandlers::commit_csr_approval(const ApiRequest& req, const StoredObject& stored,
                                       const rapidjson::Value& current,
                                       const rapidjson::Value& incoming) {
  rapidjson::Document next;
  auto causes = prepare_csr_approval(next, incoming, current, now_rfc3339());
  if (!causes.empty()) return invalid_fields(kKind, kGroup, req.path.name, causes);
  set_meta_string(next, "resourceVersion", std::to_string(stored.rv));
  if (to_json(next) == *stored.json) return full_object(req, 200, *stored.json);
  const ResourceInfo& r = *req.resource;
  StoredObject obj = store_.put(r.key(), "", req.path.name, next);
  return full_object(req, 200, *obj.json);
}

}  // namespace yurthub::fake
