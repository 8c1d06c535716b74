// Fuzz target for what the OTA endpoints (ota/) read from a caller and from the apiserver:
// ota_handler.h parse_ota_path (the admin port's request path) and pod_checks.h (a Pod the
// apiserver returned: the pre-checks, the next version, the owner, the image-pull patch built from
// it, and a static pod's set name). Input: the path, the node name and the Pod's JSON,
// NUL-separated. Oracles: a parsed path names only non-empty segments of name characters; a static
// set name is the part of the pod name before "-<node>"; the image-pull patch is JSON whose first
// PodImageReady condition is False and names the next version.
#include <rapidjson/document.h>

#include "base/json_parse.h"
#include "ota/ota_handler.h"
#include "ota/pod_checks.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

bool is_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

// A JSON string with its length (a \u0000 inside it does not end it).
std::string_view text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

void check_patch(const std::string& patch, const std::string& version) {
  rapidjson::Document doc;
  fuzz::check(static_cast<bool>(base::parse_json(patch, doc)),
              "an image-pull patch that is no JSON");
  fuzz::check(doc.IsObject() && doc.HasMember("status") && doc["status"].IsObject() &&
                  doc["status"].HasMember("conditions") && doc["status"]["conditions"].IsArray(),
              "an image-pull patch without status.conditions");
  // As UpdatePodCondition, the first PodImageReady is the one set (a pod may list it twice).
  for (const auto& c : doc["status"]["conditions"].GetArray()) {
    if (!c.IsObject() || !c.HasMember("type") || !c["type"].IsString() ||
        text(c["type"]) != ota::kPodImageReady) {
      continue;
    }
    fuzz::check(c.HasMember("status") && c["status"].IsString() && text(c["status"]) == "False",
                "PodImageReady not False in the patch");
    fuzz::check(c.HasMember("message") && c["message"].IsString() &&
                    text(c["message"]) == std::string(ota::kVersionPrefix) + version,
                "PodImageReady naming another version");
    return;
  }
  fuzz::check(false, "no PodImageReady in the patch");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  if (auto path = ota::parse_ota_path(parts[0])) {
    if (path->endpoint != ota::OtaPath::Endpoint::Pods) {
      fuzz::check(is_name(path->namespace_name) && is_name(path->pod_name),
                  "an OTA path naming something that is no name");
    }
    if (auto set = ota::static_set_name(path->pod_name, parts[1])) {
      fuzz::check(path->pod_name.starts_with(*set + "-" + std::string(parts[1])),
                  "a static set name that is not the pod name's head");
    }
  }
  rapidjson::Document pod;
  if (!base::parse_json(parts[2], pod)) return 0;
  (void)ota::pod_status_problem(pod, parts[1]);
  (void)ota::image_ready_problem(pod);
  (void)ota::first_owner_kind(pod);
  const std::string version = ota::next_hash_version(pod);
  if (pod.IsObject()) check_patch(ota::image_pull_patch(pod, "2026-11-27T03:04:05Z"), version);
  return 0;
}
