// Kubernetes strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch, patch format v2
// as kubelet and kubectl send it) applied to RapidJSON documents. Used by the offline write journal
// to apply kubelet's pod and node status patches to cached objects, and by the fake apiserver in
// test/ to serve PATCH. Pure; no I/O. On error the target may be partially modified: callers apply
// to a copy and keep the original on failure.
//
// The merge keys come from a plain table (strategic_merge.cc) keyed by the target's top-level
// "kind" and a dotted path with "[]" for "each element of a list", copied from the patchStrategy
// and patchMergeKey tags of k8s.io/api core/v1 and meta/v1 types.go:
//   every kind: metadata.ownerReferences (uid), metadata.finalizers (set of strings);
//   Pod: spec.containers, spec.initContainers, spec.ephemeralContainers, spec.volumes,
//        spec.imagePullSecrets (name); spec.hostAliases (ip); in each kind of container env (name),
//        ports (containerPort), volumeMounts (mountPath), volumeDevices (devicePath);
//        status.conditions (type); status.podIPs, status.hostIPs (ip);
//   Node: spec.podCIDRs (set of strings); status.conditions, status.addresses (type).
// Every other list is replaced. Note status.containerStatuses, initContainerStatuses and
// ephemeralContainerStatuses carry no patchStrategy in types.go: they are replaced whole (kubelet
// always sends them whole). Not in the table: spec.resourceClaims and spec.schedulingGates (no
// kubelet sends them), and every list of every other kind.
//
// Where this differs from strategicpatch, on purpose:
// - A value put where the target has nothing (a new member, a new list element, a replaced list)
//   is the patch merged onto nothing: null members are dropped and directives applied, never
//   copied. strategicpatch copies such values as they are and relies on the typed decode that
//   follows to drop what is left; this store keeps untyped JSON.
// - `$patch: replace` on a map the target lacks gives the map (strategicpatch drops it). Like
//   strategicpatch, `$patch: merge` in a map is refused ("unknown patch type"), although it names
//   the default: the apiserver answers it 500, so a journaled patch carrying it could never replay.
// - `$deleteFromPrimitiveList/<list>` applies after the other members of its map (strategicpatch
//   follows Go's random map order); target list elements without the merge key never match
//   (strategicpatch fails on them).
// Ordering follows strategicpatch's normalizeElementOrder: with `$setElementOrder/<list>` the named
// elements come in that order; otherwise patch elements come in patch order. Elements only the
// target has keep their original relative positions among them, and a new element goes before the
// target-only elements still to come (so a lone new finalizer or condition comes first, as
// against a real apiserver).
#pragma once

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::kube {

// Applies the strategic merge patch `patch` (a JSON object) to `target` (a JSON object):
// - maps merge recursively and `null` deletes a member;
// - lists with a merge key merge element by element (matched by the key's value, new ones added),
//   `{"<key>": v, "$patch": "delete"}` deletes the element, and a `{"$patch": "replace"}` element
//   replaces the list with the other elements of the patch list; lists of strings with the merge
//   strategy (finalizers) are a set union, `$deleteFromPrimitiveList/<list>: [...]` removes values;
//   other lists are replaced;
// - `$setElementOrder/<list>` orders the list, `$retainKeys: [...]` drops the target's members it
//   does not name, `$patch: replace` replaces a map with the patch's, `$patch: delete` empties it.
// Directives never appear in the result. A patch that is not an object, an unknown or malformed
// directive, a merge-key list element without the key, or nesting deeper than 1000 levels is an
// error naming where, e.g. "strategic merge patch: status.conditions: element has no merge key
// type". Values are deep-copied (strings included) into `target`'s allocator, so `patch` may be
// freed afterwards. REQUIRES: `patch` is not part of `target`.
Status apply_strategic_merge_patch(rapidjson::Document& target, const rapidjson::Value& patch);

}  // namespace yurthub::kube
