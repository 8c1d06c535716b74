// Fuzz target for pool-admission's webhook (admission/webhook.h): what kube-apiserver, or anyone
// reaching the port, POSTs. Input: a path selector byte ('v': /validate-nodes, any
// other: /mutate-pods), then the body. Oracles: the answer is JSON, 200 exactly when the body
// parses as an AdmissionReview v1 (else a Status); a 200 echoes the request's uid; a patch comes
// only from /mutate-pods, decodes from base64 to a JSON Patch that applies to the request's object,
// and the patched pod needs no further patch (the mutation is idempotent, as a re-invoked webhook
// relies on).
#include <rapidjson/document.h>

#include "admission/admission_review.h"
#include "admission/pod_affinity.h"
#include "admission/webhook.h"
#include "base/base64.h"
#include "base/json_member.h"
#include "base/json_parse.h"
#include "kube/json_patch.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

void check_patch(const admission::AdmissionRequest& request, const std::string& encoded) {
  auto patch_text = base::decode_base64(encoded);
  fuzz::check(patch_text.ok(), "a patch that is not base64");
  rapidjson::Document patch;
  fuzz::check(base::parse_json(*patch_text, patch).ok() && patch.IsArray() && !patch.Empty(),
              "a patch that is not a non-empty JSON array");
  rapidjson::Document pod;
  pod.CopyFrom(request.object, pod.GetAllocator());
  fuzz::check(kube::apply_json_patch(pod, patch).ok(), "a patch that does not apply to the pod");
  fuzz::check(admission::host_network_exclusion_patch(pod).empty(),
              "a patched pod that would be patched again");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 256 * 1024) return 0;
  const bool mutate = data[0] != 'v';
  const std::string_view body = fuzz::as_text(data + 1, size - 1);
  const admission::WebhookConfig config{"system:serviceaccount:kube-system:pool-admission"};
  const auto answer = admission::answer_review(
      mutate ? admission::kMutatePodsPath : admission::kValidateNodesPath, body, config);
  rapidjson::Document reply;
  fuzz::check(base::parse_json(answer.body, reply).ok() && reply.IsObject(),
              "an answer that is not a JSON object");
  auto request = admission::parse_admission_review(body);
  fuzz::check((answer.status == 200) == request.ok(), "200 for a body that does not parse, or not");
  if (!request) {
    fuzz::check(base::string_member(reply, "kind") == "Status", "an error that is not a Status");
    return 0;
  }
  const rapidjson::Value* response = base::find_member(reply, "response");
  fuzz::check(response && base::string_member(*response, "uid") == request->uid,
              "a response that does not echo the uid");
  const rapidjson::Value* patch = base::find_member(*response, "patch");
  fuzz::check(!patch || mutate, "a patch from /validate-nodes");
  if (patch) {
    fuzz::check(patch->IsString(), "a patch that is not a string");
    check_patch(*request, base::string_member(*response, "patch"));
  }
  return 0;
}
