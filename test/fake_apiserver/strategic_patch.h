// The fake apiserver's own strategic merge patch, written from the semantics of
// k8s.io/apimachinery/pkg/util/strategicpatch (StrategicMergeMapPatch with the apiserver's options:
// parallel deletion lists merged, unmatched nulls ignored) over the schema table of
// patch_strategies.h, independently of the hub's cache/ code. Called by api_update.cc for PATCH
// with application/strategic-merge-patch+json. Pure; single-threaded use.
//
// The apiserver merges untyped maps and then decodes the result into the typed object, which
// drops what no field holds (leftover directives, nulls put where nothing was). The fake keeps
// untyped JSON, so a value taken from the patch whole (a new member, a new list element, a
// replaced list or map) is taken without its null members and $-directives, which is what that
// decode leaves of it.
#pragma once

#include <optional>
#include <string_view>

#include <rapidjson/document.h>

#include "test/fake_apiserver/json_patch.h"

namespace yurthub::fake {

// Applies `patch` to `doc`, an object of `kind` ("Pod"), all or nothing: on error `doc` is
// unchanged. Maps merge member by member (null deletes); a list with a merge key merges element
// by element ({"<key>":v,"$patch":"delete"} deletes, a {"$patch":"replace"} element replaces the
// list with the other elements); a list of scalars with the merge strategy is a set union;
// other lists are replaced. Directives: "$patch": replace|delete in a map,
// "$retainKeys", "$setElementOrder/<list>", "$deleteFromPrimitiveList/<list>". Elements are
// ordered as strategicpatch's normalizeElementOrder orders them.
// Errors as the apiserver answers them: `patch` not an object (BadRequest), a malformed
// $retainKeys (BadRequest), a list of lists (Rejected), everything strategicpatch reports as a
// plain error: an unknown $patch, an element without its merge key, a $setElementOrder that
// contradicts its list (Unknown, the apiserver's 500).
std::optional<PatchError> apply_strategic_merge_patch(rapidjson::Document& doc,
                                                      const rapidjson::Value& patch,
                                                      std::string_view kind);

}  // namespace yurthub::fake
