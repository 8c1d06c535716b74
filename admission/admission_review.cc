// AdmissionReview v1 parsing and writing; see admission_review.h.
#include "admission/admission_review.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/base64.h"
#include "base/json_member.h"
#include "base/json_parse.h"

namespace yurthub::admission {
namespace {

constexpr std::string_view kApiVersion = "admission.k8s.io/v1";

Error invalid(std::string message) {
  return make_error(ErrorCode::InvalidArgument, "not an AdmissionReview v1: " + std::move(message));
}

// Copies request.<name> into `out` when it is present and not null.
void copy_object(const rapidjson::Value& request, const char* name, rapidjson::Document& out) {
  const rapidjson::Value* value = base::find_member(request, name);
  if (value && !value->IsNull()) out.CopyFrom(*value, out.GetAllocator());
}

}  // namespace

Result<AdmissionRequest> parse_admission_review(std::string_view body) {
  rapidjson::Document review;
  if (Status parsed = base::parse_json(body, review); !parsed) {
    return invalid(parsed.error().message);
  }
  if (!review.IsObject()) return invalid("the body is not a JSON object");
  const std::string api_version = base::string_member(review, "apiVersion");
  if (api_version != kApiVersion) {
    return invalid("apiVersion is \"" + api_version + "\", expected \"" + std::string(kApiVersion) +
                   "\"");
  }
  if (base::string_member(review, "kind") != "AdmissionReview") {
    return invalid("kind is not AdmissionReview");
  }
  const rapidjson::Value* request = base::find_member(review, "request");
  if (!request || !request->IsObject()) return invalid("it has no request");
  AdmissionRequest out;
  out.uid = base::string_member(*request, "uid");
  if (out.uid.empty()) return invalid("request.uid is missing");
  if (const rapidjson::Value* kind = base::find_member(*request, "kind")) {
    out.kind = base::string_member(*kind, "kind");
  }
  out.operation = base::string_member(*request, "operation");
  out.name = base::string_member(*request, "name");
  out.namespace_name = base::string_member(*request, "namespace");
  if (const rapidjson::Value* user = base::find_member(*request, "userInfo")) {
    out.username = base::string_member(*user, "username");
  }
  copy_object(*request, "object", out.object);
  copy_object(*request, "oldObject", out.old_object);
  return out;
}

std::string admission_review_response(std::string_view uid, const AdmissionResponse& response) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto string = [&w](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("apiVersion");
  string(kApiVersion);
  w.Key("kind");
  w.String("AdmissionReview");
  w.Key("response");
  w.StartObject();
  w.Key("uid");
  string(uid);
  w.Key("allowed");
  w.Bool(response.allowed);
  if (!response.json_patch.empty()) {
    w.Key("patchType");
    w.String("JSONPatch");
    w.Key("patch");
    string(base::encode_base64(response.json_patch));
  }
  if (response.code != 0) {
    w.Key("status");
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    w.EndObject();
    w.Key("status");
    w.String(response.allowed ? "Success" : "Failure");
    w.Key("message");
    string(response.message);
    w.Key("reason");
    string(response.reason);
    w.Key("code");
    w.Uint(response.code);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace yurthub::admission
