// CertificateSigningRequest, bootstrap token and cluster-info JSON; see
// certificate_signing_request.h.
#include "kube/certificate_signing_request.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/base64.h"
#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

std::string_view string_member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return {};
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

bool token_chars(std::string_view text) {
  for (char c : text) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

std::string csr_object_json(const CsrSpec& spec) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("apiVersion");
  w.String("certificates.k8s.io/v1");
  w.Key("kind");
  w.String("CertificateSigningRequest");
  w.Key("metadata");
  w.StartObject();
  w.Key("generateName");
  w.String("csr-");
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("request");
  w.String(base::encode_base64(spec.request_pem).c_str());
  w.Key("signerName");
  w.String(spec.signer_name.c_str());
  if (spec.expiration_seconds) {
    w.Key("expirationSeconds");
    w.Int64(*spec.expiration_seconds);
  }
  w.Key("usages");
  w.StartArray();
  for (const auto& usage : spec.usages) w.String(usage.c_str());
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

Result<CsrState> parse_csr_state(std::string_view json) {
  rapidjson::Document doc;
  if (auto parsed = base::parse_json(json, doc); !parsed) return parsed.error();
  if (string_member(doc, "kind") != "CertificateSigningRequest") {
    return make_error(ErrorCode::InvalidArgument, "not a CertificateSigningRequest");
  }
  CsrState state;
  auto meta = doc.FindMember("metadata");
  if (meta != doc.MemberEnd()) state.name = std::string(string_member(meta->value, "name"));
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) return state;
  auto conditions = status->value.FindMember("conditions");
  if (conditions != status->value.MemberEnd() && conditions->value.IsArray()) {
    for (const auto& condition : conditions->value.GetArray()) {
      if (string_member(condition, "status") == "False") continue;
      const auto type = string_member(condition, "type");
      const std::string why = std::string(string_member(condition, "reason")) + ": " +
                              std::string(string_member(condition, "message"));
      if (type == "Denied") {
        return CsrState{CsrState::Phase::Denied, state.name, "", why};
      }
      if (type == "Failed") {
        return CsrState{CsrState::Phase::Failed, state.name, "", why};
      }
      if (type == "Approved") state.phase = CsrState::Phase::Approved;
    }
  }
  const auto certificate = string_member(status->value, "certificate");
  if (!certificate.empty()) {
    auto pem = base::decode_base64(certificate);
    if (!pem) {
      return make_error(ErrorCode::InvalidArgument,
                        "status.certificate is not base64: " + pem.error().message);
    }
    state.certificate_pem = std::move(*pem);
    state.phase = CsrState::Phase::Issued;
  }
  return state;
}

Result<BootstrapToken> parse_bootstrap_token(std::string_view text) {
  const auto dot = text.find('.');
  if (text.size() != 23 || dot != 6 || !token_chars(text.substr(0, 6)) ||
      !token_chars(text.substr(7))) {
    return make_error(ErrorCode::InvalidArgument,
                      "the bootstrap token is not of the form [a-z0-9]{6}.[a-z0-9]{16}");
  }
  return BootstrapToken{std::string(text.substr(0, 6)), std::string(text.substr(7))};
}

Result<ClusterInfo> parse_cluster_info(std::string_view configmap_json, std::string_view token_id) {
  rapidjson::Document doc;
  if (auto parsed = base::parse_json(configmap_json, doc); !parsed) return parsed.error();
  // Not MemberEnd() of a non-object: RapidJSON asserts (found by certificate_objects_fuzz).
  if (!doc.IsObject()) {
    return make_error(ErrorCode::InvalidArgument, "the cluster-info ConfigMap is not an object");
  }
  auto data = doc.FindMember("data");
  if (data == doc.MemberEnd() || !data->value.IsObject()) {
    return make_error(ErrorCode::InvalidArgument, "the cluster-info ConfigMap has no data");
  }
  ClusterInfo info;
  info.kubeconfig = std::string(string_member(data->value, "kubeconfig"));
  if (info.kubeconfig.empty()) {
    return make_error(ErrorCode::InvalidArgument, "the cluster-info ConfigMap has no kubeconfig");
  }
  const std::string key = "jws-kubeconfig-" + std::string(token_id);
  if (auto it = data->value.FindMember(key.c_str());
      it != data->value.MemberEnd() && it->value.IsString()) {
    info.signature = std::string(it->value.GetString(), it->value.GetStringLength());
  }
  return info;
}

Result<std::vector<std::string>> parse_service_cluster_ips(std::string_view service_json) {
  rapidjson::Document doc;
  if (auto parsed = base::parse_json(service_json, doc); !parsed) return parsed.error();
  if (!doc.IsObject())
    return make_error(ErrorCode::InvalidArgument, "the Service is not an object");
  auto spec = doc.FindMember("spec");
  if (spec == doc.MemberEnd() || !spec->value.IsObject()) {
    return make_error(ErrorCode::InvalidArgument, "the Service has no spec");
  }
  std::vector<std::string> ips;
  const auto add = [&ips](const rapidjson::Value& ip) {
    if (!ip.IsString()) return;
    std::string text(ip.GetString(), ip.GetStringLength());
    if (!text.empty() && text != "None") ips.push_back(std::move(text));
  };
  if (auto list = spec->value.FindMember("clusterIPs");
      list != spec->value.MemberEnd() && list->value.IsArray() && !list->value.Empty()) {
    for (const auto& ip : list->value.GetArray()) add(ip);
  } else if (auto one = spec->value.FindMember("clusterIP"); one != spec->value.MemberEnd()) {
    add(one->value);
  }
  return ips;
}

Result<DetachedJws> split_detached_jws(std::string_view jws, std::string_view content,
                                       std::string_view token_id) {
  const auto first = jws.find('.');
  if (first == std::string_view::npos || jws.substr(first, 2) != "..") {
    return make_error(ErrorCode::InvalidArgument, "the signature is not a detached JWS");
  }
  const std::string_view header_b64 = jws.substr(0, first);
  const std::string_view signature_b64 = jws.substr(first + 2);
  auto header_json = base::decode_base64url(header_b64);
  auto signature = base::decode_base64url(signature_b64);
  if (!header_json || !signature) {
    return make_error(ErrorCode::InvalidArgument, "the signature's JWS is not base64url");
  }
  rapidjson::Document header;
  if (auto parsed = base::parse_json(*header_json, header); !parsed || !header.IsObject()) {
    return make_error(ErrorCode::InvalidArgument, "the signature's JWS header is not JSON");
  }
  if (string_member(header, "alg") != "HS256" || string_member(header, "kid") != token_id) {
    return make_error(ErrorCode::InvalidArgument,
                      "the signature's JWS header is not HS256 for this token");
  }
  DetachedJws out;
  out.signing_input = std::string(header_b64) + "." + base::encode_base64url(content);
  out.signature = std::move(*signature);
  return out;
}

}  // namespace yurthub::kube
