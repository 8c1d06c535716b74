// The strategic merge patch schema of the kinds the fake apiserver serves: for each list field
// that is not replaced whole, its patchStrategy and patchMergeKey, copied from the struct tags of
// k8s.io/api v0.26 (core/v1 and meta/v1 types.go; cross-checked against the v1.26 OpenAPI's
// x-kubernetes-patch-strategy annotations). Used by strategic_patch.cc. Immutable table; pure.
#pragma once

#include <string_view>

namespace yurthub::fake {

// How strategicpatch merges one field.
struct FieldStrategy {
  bool merge = false;          // patchStrategy "merge" (or "merge,retainKeys"); else replaced
  std::string_view merge_key;  // patchMergeKey; "" for a list of scalars merged as a set
};

// The strategy of the field at `path` in an object of `kind`: member names from the top of the
// object joined by '.', list levels skipped ("spec.containers.ports" is the ports of every
// container). Fields not in the table, and every field of a kind not in it, are {merge: false}:
// their lists are replaced whole (maps always merge).
FieldStrategy field_strategy(std::string_view kind, std::string_view path);

}  // namespace yurthub::fake
