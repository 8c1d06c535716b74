// RFC 7386 merge-patch diff: the merge patch that turns one JSON document into another. Used by
// the offline write journal (cache/) for the three-way merge that replays an update made offline
// onto a newer cloud object: the diff of the offline change, applied to the cloud's copy with
// apply_merge_patch (json_patch.h). Pure; no I/O.
#pragma once

#include <rapidjson/document.h>

namespace yurthub::kube {

// The RFC 7386 merge patch that turns `original` into `modified`: members `modified` lacks are
// null, changed scalars and arrays are the new value, objects present in both are diffed
// recursively, and equal members are left out, so equal documents give `{}`. If either is not an
// object the patch is `modified` itself. apply_merge_patch(original, patch) yields `modified`
// whenever `modified` has no null member (a merge patch cannot set a member to null: null deletes).
// Objects are compared by value, members in any order, numbers by value. The result owns its
// memory (strings are copied).
rapidjson::Document create_merge_patch(const rapidjson::Value& original,
                                       const rapidjson::Value& modified);

}  // namespace yurthub::kube
