// JSON Patch (as kube-apiserver applies it) and JSON Merge Patch (RFC 7386) applied to RapidJSON
// documents. Used by the offline write journal to apply kubelet's patches to cached objects; the
// journal replays the same patch to the apiserver, so both must agree. Pure; no I/O. On error the
// target may be partially modified: callers apply to a copy and keep the original on failure.
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

// Applies the JSON patch `patch` (an array of add, remove, replace, move, copy and test operations)
// to `target`, whose allocator is used for new values, as kube-apiserver v1.26 does with
// github.com/evanphx/json-patch v4.12.0, not as strict RFC 6902:
//   - a path is split on '/' with the text before the first '/' ignored and "~0"/"~1" decoded (a
//     '~' that starts no escape stays); "" is the whole document for replace and test only;
//   - array indices are read as Go's strconv.Atoi reads them (a sign, leading zeros), and a
//     negative index counts from the end: for add, from one past the end ("-1" appends);
//   - replace of a missing object member adds it; replace "" with a value that is not an object
//     or array does nothing;
//   - a missing "value" is null; but a test whose target is missing, null or "" and a replace of
//     "" with no "value" are refused (json-patch dereferences a nil pointer there, a 500);
//   - test: a missing member equals null; scalars compare as JSON text (1 is not 1.0); a null
//     element in compared arrays fails the test (json-patch panics there);
//   - copy from a missing object member adds null;
//   - a move removes first, then resolves its destination (into its own child: not found).
// Errors name the operation index, e.g. "json patch operation 2 (replace /spec/x/0): array index
// 0 out of range". So is a patch over kMaxJsonPatchOperations, copies over kMaxJsonPatchCopyBytes
// in total (in the apiserver's words: "Unable to complete the copy, the accumulated size increase
// of copy is N, exceeding the limit 3145728"), and a result nested more than base::kMaxJsonDepth
// levels deep. Values are deep-copied (strings included) into `target`'s allocator, so `patch`
// may be freed afterwards. REQUIRES: `patch` is not part of `target`.
Status apply_json_patch(rapidjson::Document& target, const rapidjson::Value& patch);

// Applies an RFC 7386 merge patch: objects merge recursively, `null` deletes a member, any other
// value (arrays included) replaces. A non-object patch replaces the whole target. Fails only on a
// patch nested more than 1000 levels deep (then `target` is untouched). Of a patch object's
// members of one name only the last is applied, as the apiserver's decoding into a Go map keeps
// only the last (so applying a patch twice gives what applying it once gave).
// REQUIRES: `patch` is not part of `target`.
Status apply_merge_patch(rapidjson::Document& target, const rapidjson::Value& patch);

}  // namespace yurthub::kube
