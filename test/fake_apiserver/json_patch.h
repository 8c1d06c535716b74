// The fake apiserver's own JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386), written from the
// RFCs and from what kube-apiserver v1.26 does with them (handlers/patch.go over
// evanphx/json-patch v4), independently of the hub's cache/ code so that the integration tests
// compare the hub against an oracle rather than against itself. Called by api_update.cc for
// PATCH; strategic_patch.h shares PatchError. Pure; single-threaded use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <rapidjson/document.h>

namespace yurthub::fake {

// Why a patch was not applied, in the terms of the answer kube-apiserver gives (status.cc maps
// each to its Status: see patch_failed() there).
enum class PatchFailure {
  BadRequest,  // 400: the patch cannot be decoded or a directive is malformed
  Rejected,    // 422 "the server rejected our request due to an error in our request": a JSON
               // patch operation that does not apply (the apiserver does not say which)
  TooLarge,    // 413: more JSON patch operations than the apiserver accepts
  Unknown,     // 500 without a reason: strategicpatch's plain errors (an unknown $patch, a
               // missing merge key), which the apiserver passes through unconverted
};

struct PatchError {
  PatchFailure failure = PatchFailure::BadRequest;
  std::string message;
};

// kube-apiserver's limits (handlers/patch.go maxJSONPatchOperations; the accumulated growth
// evanphx/json-patch allows "copy" operations, AccumulatedCopySizeLimit, set by the apiserver).
inline constexpr std::size_t kJsonPatchMaxOperations = 10000;
inline constexpr std::size_t kJsonPatchMaxCopyBytes = std::size_t{3} * 1024 * 1024;

// Applies the RFC 6902 operations in `patch` (a JSON array) to `doc`, in order, all or nothing:
// on error `doc` is unchanged. Beyond the RFC, as evanphx/json-patch v4 does for the apiserver,
// an array index may be negative (counted from the end). Errors: `patch` not an array or an
// operation malformed (BadRequest), more than kJsonPatchMaxOperations operations (TooLarge), an
// operation that does not apply: missing path, bad index, failed test (Rejected).
std::optional<PatchError> apply_json_patch(rapidjson::Document& doc, const rapidjson::Value& patch);

// Applies the RFC 7386 merge patch `patch` to `doc`: objects merge recursively, null removes a
// member, anything else (arrays included) replaces; a patch that is not an object replaces the
// whole document. Never fails.
void apply_merge_patch(rapidjson::Document& doc, const rapidjson::Value& patch);

// What Go's encoding/json calls a JSON value's type in "cannot unmarshal X into ...": "object",
// "array", "string", "number", "bool", or "null".
const char* go_json_type(const rapidjson::Value& value);

}  // namespace yurthub::fake
