// JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386) applied to RapidJSON documents. Used by the
// offline write journal to apply kubelet's patches to cached objects, and by the fake apiserver in
// test/ to serve PATCH. Pure; no I/O. On error the target may be partially modified: callers apply
// to a copy and keep the original on failure.
#pragma once

#include <cstddef>
#include <string>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::kube {

// kube-apiserver's limits on a JSON patch (k8s.io/apiserver handlers/patch.go and
// server/config.go): at most 10000 operations (more is a 413 there), and "copy" operations may grow
// the document by at most 3 MiB in total (twice etcd's 1.5 MiB request limit), so that a patch of a
// few kilobytes cannot double the document once per operation.
inline constexpr std::size_t kMaxJsonPatchOperations = 10000;
inline constexpr std::size_t kMaxJsonPatchCopyBytes = std::size_t{3} << 20;

// The apiserver's words for a patch of `operations` operations, over kMaxJsonPatchOperations.
std::string too_many_operations(std::size_t operations);

// Applies the RFC 6902 operation array `patch` (add, remove, replace, move, copy, test) to
// `target`, whose allocator is used for new values. JSON Pointers per RFC 6901 (`~0`, `~1`, `-` for
// append). A failed `test`, a missing path, a bad index or a malformed operation is an error that
// names the operation index, e.g. "json patch operation 2 (replace /spec/x): path not found".
// So is a patch over kMaxJsonPatchOperations, copies over kMaxJsonPatchCopyBytes in total (in the
// apiserver's words: "Unable to complete the copy, the accumulated size increase of copy is N,
// exceeding the limit 3145728"), and a result nested more than base::kMaxJsonDepth levels deep.
// Values are deep-copied (strings included) into `target`'s allocator, so `patch` may be freed
// afterwards. REQUIRES: `patch` is not part of `target`.
Status apply_json_patch(rapidjson::Document& target, const rapidjson::Value& patch);

// Applies an RFC 7386 merge patch: objects merge recursively, `null` deletes a member, any other
// value (arrays included) replaces. A non-object patch replaces the whole target. Fails only on a
// patch nested more than 1000 levels deep (then `target` is untouched).
// REQUIRES: `patch` is not part of `target`.
Status apply_merge_patch(rapidjson::Document& target, const rapidjson::Value& patch);

}  // namespace yurthub::kube
