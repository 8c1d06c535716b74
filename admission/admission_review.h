// AdmissionReview v1 (admission.k8s.io/v1) as kube-apiserver sends it to a webhook and reads the
// answer: the request parsed into the few fields pool-admission decides on, and the response
// written with the request's uid. Pure; called by admission/webhook.cc for every POST, and by the
// fuzz target test/fuzz/admission_review_fuzz.cc. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::admission {

// What a review's `request` says. Objects are copied out of the review, so the request outlives
// the body it was parsed from.
struct AdmissionRequest {
  std::string uid;                 // request.uid: echoed in the response, never empty
  std::string kind;                // request.kind.kind, e.g. "Pod" (the object's kind, any version)
  std::string operation;           // CREATE, UPDATE, DELETE or CONNECT
  std::string name;                // request.name ("" for a pod created with generateName)
  std::string namespace_name;      // request.namespace ("" for cluster-scoped objects)
  std::string username;            // request.userInfo.username: who made the change
  rapidjson::Document object;      // request.object; null when absent (DELETE)
  rapidjson::Document old_object;  // request.oldObject; null when absent (CREATE)
};

// Parses an AdmissionReview v1. Refused (InvalidArgument, the message says what is wrong): not
// JSON or nested too deep, not an object, apiVersion other than admission.k8s.io/v1 (the
// webhook configurations in docs/examples ask for v1 only), kind other than AdmissionReview, no
// `request` object, a missing or empty request.uid.
Result<AdmissionRequest> parse_admission_review(std::string_view body);

// The webhook's answer to one request.
struct AdmissionResponse {
  bool allowed = true;
  std::string json_patch;  // RFC 6902 JSON Patch text, sent base64-encoded; "" for none
  // For a refusal: response.status as a metav1.Status (code, reason, message).
  unsigned code = 0;
  std::string reason;
  std::string message;
};

// The AdmissionReview v1 JSON that answers the request `uid`:
// {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":...,
//  "allowed":...,["patchType":"JSONPatch","patch":<base64>],["status":{...}]}}
std::string admission_review_response(std::string_view uid, const AdmissionResponse& response);

}  // namespace yurthub::admission
