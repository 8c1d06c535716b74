// CertificateSigningRequest create and approval rules; see csr_validation.h.
#include "test/fake_apiserver/csr_validation.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "base/base64.h"
#include "test/fake_apiserver/csr_request.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

using Value = rapidjson::Value;

// allValidUsages in pkg/apis/certificates/validation, sorted as sets.String.List() gives them.
const std::vector<std::string_view> kValidUsages = {"any",
                                                    "cert sign",
                                                    "client auth",
                                                    "code signing",
                                                    "content commitment",
                                                    "crl sign",
                                                    "data encipherment",
                                                    "decipher only",
                                                    "digital signature",
                                                    "email protection",
                                                    "encipher only",
                                                    "ipsec end system",
                                                    "ipsec tunnel",
                                                    "ipsec user",
                                                    "key agreement",
                                                    "key encipherment",
                                                    "microsoft sgc",
                                                    "netscape sgc",
                                                    "ocsp signing",
                                                    "s/mime",
                                                    "server auth",
                                                    "signing",
                                                    "timestamping"};

const Value* member(const Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Go's %#v of a []byte: []byte{0x2d, 0x2d, ...}; []byte(nil) when absent.
std::string go_bytes(const std::string* bytes) {
  if (bytes == nullptr) return "[]byte(nil)";
  std::string out = "[]byte{";
  char hex[8];
  for (std::size_t i = 0; i < bytes->size(); ++i) {
    std::snprintf(hex, sizeof hex, "%s0x%x", i == 0 ? "" : ", ",
                  static_cast<unsigned char>((*bytes)[i]));
    out += hex;
  }
  return out + "}";
}

FieldCause invalid_cause(std::string field, const std::string& value, std::string_view why) {
  return {"FieldValueInvalid", "Invalid value: " + value + ": " + std::string(why),
          std::move(field)};
}

FieldCause required_cause(std::string field) {
  return {"FieldValueRequired", "Required value", std::move(field)};
}

void validate_usages(const Value* usages, std::vector<FieldCause>& out) {
  if (usages == nullptr || !usages->IsArray() || usages->Empty()) {
    out.push_back(required_cause("spec.usages"));
    return;
  }
  std::string supported;
  for (auto u : kValidUsages) supported += (supported.empty() ? "" : ", ") + quote(u);
  std::set<std::string> seen;
  std::vector<FieldCause> duplicates;
  for (rapidjson::SizeType i = 0; i < usages->Size(); ++i) {
    std::string u = (*usages)[i].IsString() ? (*usages)[i].GetString() : "";
    std::string field = "spec.usages[" + std::to_string(i) + "]";
    if (std::find(kValidUsages.begin(), kValidUsages.end(), u) == kValidUsages.end()) {
      out.push_back({"FieldValueNotSupported",
                     "Unsupported value: " + quote(u) + ": supported values: " + supported, field});
    }
    if (!seen.insert(u).second) {
      duplicates.push_back({"FieldValueDuplicate", "Duplicate value: " + quote(u), field});
    }
  }
  out.insert(out.end(), duplicates.begin(), duplicates.end());
}

// ValidateSignerName, without the per-label DNS checks.
void validate_signer_name(const std::string& name, std::vector<FieldCause>& out) {
  if (name.empty()) {
    out.push_back(required_cause("spec.signerName"));
    return;
  }
  if (name == "kubernetes.io/legacy-unknown") {
    out.push_back(invalid_cause("spec.signerName", quote(name),
                                "the legacy signerName is not allowed via this API version"));
    return;
  }
  auto slash = name.find('/');
  if (slash == std::string::npos || name.find('/', slash + 1) != std::string::npos) {
    out.push_back(invalid_cause(
        "spec.signerName", quote(name),
        "must be a fully qualified domain and path of the form 'example.com/signer-name'"));
    return;
  }
  std::string domain = name.substr(0, slash);
  if (domain.find('.') == std::string::npos) {
    out.push_back(invalid_cause("spec.signerName", quote(domain),
                                "should be a domain with at least two segments separated by dots"));
  }
}

// One condition in the API's field order; unknown fields dropped as the decoder drops them.
Value canonical_condition(const Value& c, rapidjson::Document::AllocatorType& a) {
  Value out(rapidjson::kObjectType);
  for (const char* f :
       {"type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime"}) {
    const Value* v = member(c, f);
    if (v != nullptr && v->IsString() && v->GetStringLength() > 0) {
      out.AddMember(Value(f, a), Value(*v, a), a);
    }
  }
  return out;
}

std::string str(const Value* v) { return v != nullptr && v->IsString() ? v->GetString() : ""; }

std::vector<FieldCause> validate_conditions(const Value& conds, const Value* old_conds) {
  std::vector<FieldCause> out;
  std::set<std::string> seen;
  bool approved = false, denied = false;
  for (rapidjson::SizeType i = 0; i < conds.Size(); ++i) {
    std::string at = "status.conditions[" + std::to_string(i) + "]";
    std::string type = str(member(conds[i], "type"));
    std::string status = str(member(conds[i], "status"));
    if (type.empty()) out.push_back(required_cause(at + ".type"));
    bool true_only = type == "Approved" || type == "Denied" || type == "Failed";
    if (status.empty()) {
      out.push_back(required_cause(at + ".status"));
    } else if (true_only && status != "True") {
      out.push_back({"FieldValueNotSupported",
                     "Unsupported value: " + quote(status) + ": supported values: \"True\"",
                     at + ".status"});
    } else if (!true_only && status != "True" && status != "False" && status != "Unknown") {
      out.push_back({"FieldValueNotSupported",
                     "Unsupported value: " + quote(status) +
                         ": supported values: \"False\", \"True\", \"Unknown\"",
                     at + ".status"});
    }
    if ((type == "Approved" && denied) || (type == "Denied" && approved)) {
      out.push_back(invalid_cause(at + ".type", quote(type),
                                  "Approved and Denied conditions are mutually exclusive"));
    }
    approved = approved || type == "Approved";
    denied = denied || type == "Denied";
    if (!seen.insert(type).second) {
      out.push_back({"FieldValueDuplicate", "Duplicate value: " + quote(type), at + ".type"});
    }
  }
  auto count = [](const Value* list, std::string_view type) {
    int n = 0;
    if (list == nullptr || !list->IsArray()) return n;
    for (const auto& c : list->GetArray()) n += str(member(c, "type")) == type ? 1 : 0;
    return n;
  };
  for (std::string_view t : {"Approved", "Denied", "Failed"}) {
    if (count(&conds, t) < count(old_conds, t)) {
      out.push_back({"FieldValueForbidden",
                     "Forbidden: updates may not remove a condition of type " + quote(t),
                     "status.conditions"});
    }
  }
  return out;
}

}  // namespace

void prepare_csr_create(rapidjson::Document& csr, const Identity& who) {
  auto& a = csr.GetAllocator();
  Value spec(rapidjson::kObjectType);
  if (const Value* sent = member(csr, "spec"); sent != nullptr && sent->IsObject()) {
    for (const char* f : {"request", "signerName", "expirationSeconds", "usages"}) {
      if (const Value* v = member(*sent, f)) spec.AddMember(Value(f, a), Value(*v, a), a);
    }
  }
  spec.AddMember("username", Value(who.user.c_str(), a), a);
  if (!who.uid.empty()) spec.AddMember("uid", Value(who.uid.c_str(), a), a);
  Value groups(rapidjson::kArrayType);
  for (const auto& g : who.groups) groups.PushBack(Value(g.c_str(), a), a);
  if (std::find(who.groups.begin(), who.groups.end(), "system:authenticated") == who.groups.end()) {
    groups.PushBack("system:authenticated", a);
  }
  spec.AddMember("groups", groups, a);
  rapidjson::Document out;
  out.SetObject();
  auto& oa = out.GetAllocator();
  Value metadata(rapidjson::kObjectType);
  if (const Value* m = member(csr, "metadata"); m != nullptr && m->IsObject()) {
    metadata.CopyFrom(*m, oa);
  }
  out.AddMember("metadata", metadata, oa);
  out.AddMember("spec", Value(spec, oa), oa);
  out.AddMember("status", Value(rapidjson::kObjectType), oa);
  csr.Swap(out);
}

Result<std::string> csr_request_pem(const Value& csr) {
  const Value* spec = member(csr, "spec");
  const Value* request = spec != nullptr ? member(*spec, "request") : nullptr;
  if (request == nullptr || request->IsNull()) return make_error("no spec.request");
  if (!request->IsString()) return make_error("spec.request is not a string");
  // encoding/json decodes []byte with base64.StdEncoding, which skips \r and \n.
  std::string text;
  for (char c : std::string_view(request->GetString(), request->GetStringLength())) {
    if (c != '\r' && c != '\n') text += c;
  }
  auto pem = base::decode_base64(text);
  if (!pem) return make_error("illegal base64 data");
  return *pem;
}

std::vector<FieldCause> validate_csr_create(const Value& csr) {
  std::vector<FieldCause> out;
  auto pem = csr_request_pem(csr);
  std::string error;
  if (pem) {
    auto parsed = parse_csr(*pem);
    if (!parsed) error = parsed.error().message;
  } else {
    error = "PEM block type must be CERTIFICATE REQUEST";
  }
  if (!error.empty()) {
    out.push_back(invalid_cause("spec.request", go_bytes(pem ? &*pem : nullptr), error));
  }
  const Value* spec = member(csr, "spec");
  validate_usages(spec != nullptr ? member(*spec, "usages") : nullptr, out);
  validate_signer_name(csr_spec_string(csr, "signerName"), out);
  const Value* exp = spec != nullptr ? member(*spec, "expirationSeconds") : nullptr;
  if (exp != nullptr && exp->IsInt64() && exp->GetInt64() < 600) {
    out.push_back(invalid_cause("spec.expirationSeconds", std::to_string(exp->GetInt64()),
                                "may not specify a duration less than 600 seconds (10 minutes)"));
  }
  return out;
}

std::vector<FieldCause> prepare_csr_approval(rapidjson::Document& next, const Value& incoming,
                                             const Value& current, std::string_view now) {
  auto& a = next.GetAllocator();
  next.CopyFrom(current, a);
  const Value* old_status = member(current, "status");
  const Value* old_conds = old_status != nullptr ? member(*old_status, "conditions") : nullptr;
  const Value* in_status = member(incoming, "status");
  const Value* in_conds = in_status != nullptr ? member(*in_status, "conditions") : nullptr;
  Value conds(rapidjson::kArrayType);
  if (in_conds != nullptr && in_conds->IsArray()) {
    for (const auto& c : in_conds->GetArray()) {
      Value cond = canonical_condition(c, a);
      if (!cond.HasMember("lastUpdateTime")) {
        cond.AddMember("lastUpdateTime",
                       Value(now.data(), static_cast<rapidjson::SizeType>(now.size()), a), a);
      }
      if (!cond.HasMember("lastTransitionTime")) {
        // populateConditionTimestamps: keep the old transition time of the same type and status.
        std::string when(now);
        if (old_conds != nullptr && old_conds->IsArray()) {
          for (const auto& o : old_conds->GetArray()) {
            if (str(member(o, "type")) == str(member(cond, "type")) &&
                str(member(o, "status")) == str(member(cond, "status")) &&
                !str(member(o, "lastTransitionTime")).empty()) {
              when = str(member(o, "lastTransitionTime"));
              break;
            }
          }
        }
        cond.AddMember("lastTransitionTime", Value(when.c_str(), a), a);
      }
      conds.PushBack(cond, a);
    }
  }
  auto errors = validate_conditions(conds, old_conds);
  if (!next.HasMember("status") || !next["status"].IsObject()) {
    next.RemoveMember("status");
    next.AddMember("status", Value(rapidjson::kObjectType), a);
  }
  Value& status = next["status"];
  status.RemoveMember("conditions");
  if (!conds.Empty()) {
    // conditions come first in CertificateSigningRequestStatus, before certificate.
    Value rebuilt(rapidjson::kObjectType);
    rebuilt.AddMember("conditions", conds, a);
    for (auto& m : status.GetObject()) rebuilt.AddMember(m.name, m.value, a);
    status.Swap(rebuilt);
  }
  return errors;
}

bool has_csr_condition(const Value& csr, std::string_view type) {
  const Value* status = member(csr, "status");
  const Value* conds = status != nullptr ? member(*status, "conditions") : nullptr;
  if (conds == nullptr || !conds->IsArray()) return false;
  for (const auto& c : conds->GetArray()) {
    if (str(member(c, "type")) == type && str(member(c, "status")) == "True") return true;
  }
  return false;
}

void add_csr_condition(rapidjson::Document& csr, std::string_view type, std::string_view reason,
                       std::string_view message, std::string_view now) {
  rapidjson::Document incoming;
  incoming.SetObject();
  auto& a = incoming.GetAllocator();
  Value conds(rapidjson::kArrayType);
  const Value* status = member(csr, "status");
  const Value* old = status != nullptr ? member(*status, "conditions") : nullptr;
  if (old != nullptr && old->IsArray()) {
    for (const auto& c : old->GetArray()) conds.PushBack(Value(c, a), a);
  }
  auto s = [&a](std::string_view v) {
    return Value(v.data(), static_cast<rapidjson::SizeType>(v.size()), a);
  };
  Value cond(rapidjson::kObjectType);
  cond.AddMember("type", s(type), a);
  cond.AddMember("status", "True", a);
  cond.AddMember("reason", s(reason), a);
  cond.AddMember("message", s(message), a);
  conds.PushBack(cond, a);
  Value st(rapidjson::kObjectType);
  st.AddMember("conditions", conds, a);
  incoming.AddMember("status", st, a);
  rapidjson::Document next;
  (void)prepare_csr_approval(next, incoming, csr, now);
  csr.Swap(next);
}

std::string csr_spec_string(const Value& csr, const char* field) {
  const Value* spec = member(csr, "spec");
  return spec != nullptr ? str(member(*spec, field)) : "";
}

std::vector<std::string> csr_usages(const Value& csr) {
  std::vector<std::string> out;
  const Value* spec = member(csr, "spec");
  const Value* usages = spec != nullptr ? member(*spec, "usages") : nullptr;
  if (usages == nullptr || !usages->IsArray()) return out;
  for (const auto& u : usages->GetArray()) {
    if (u.IsString()) out.emplace_back(u.GetString());
  }
  return out;
}

}  // namespace yurthub::fake
