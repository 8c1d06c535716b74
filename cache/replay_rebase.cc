// Re-basing a stale offline update; see replay_rebase.h.
#include "cache/replay_rebase.h"

#include <algorithm>
#include <vector>

#include <rapidjson/document.h>

#include "base/json_parse.h"
#include "kube/json_patch.h"
#include "kube/merge_patch_diff.h"

namespace yurthub::cache {
namespace {

using rapidjson::Document;
using rapidjson::Value;

// The merge patch base -> changed, narrowed to what a write to the target changes.
Document change(const Value& base, const Value& changed, bool status_write) {
  Document diff = kube::create_merge_patch(base, changed);
  if (!diff.IsObject()) return diff;
  for (auto it = diff.MemberBegin(); it != diff.MemberEnd();) {
    const bool is_status = std::string_view(it->name.GetString()) == "status";
    it = is_status != status_write ? diff.EraseMember(it) : it + 1;
  }
  if (diff.HasMember("metadata") && diff["metadata"].IsObject()) {
    auto& metadata = diff["metadata"];
    for (const char* managed :
         {"resourceVersion", "generation", "managedFields", "uid", "creationTimestamp"}) {
      metadata.RemoveMember(managed);
    }
    if (metadata.MemberCount() == 0) diff.RemoveMember("metadata");
  }
  return diff;
}

using Path = std::vector<std::string>;

// The fields a merge patch sets: objects are walked, anything else is a leaf. (Paths are lists of
// member names: label keys contain dots.)
void leaves(const Value& patch, Path& prefix, std::vector<Path>& out) {
  if (!patch.IsObject() || patch.MemberCount() == 0) {
    out.push_back(prefix);
    return;
  }
  for (const auto& m : patch.GetObject()) {
    prefix.emplace_back(m.name.GetString(), m.name.GetStringLength());
    leaves(m.value, prefix, out);
    prefix.pop_back();
  }
}

bool overlaps(const Path& a, const Path& b) {
  const std::size_t n = std::min(a.size(), b.size());
  return std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin());
}

const Value* at(const Value& root, const Path& path) {
  const Value* v = &root;
  for (const std::string& name : path) {
    if (!v->IsObject()) return nullptr;
    auto it = v->FindMember(name.c_str());
    if (it == v->MemberEnd()) return nullptr;
    v = &it->value;
  }
  return v;
}

std::string joined(const Path& path) {
  std::string out;
  for (const std::string& name : path) out += (out.empty() ? "" : ".") + name;
  return out;
}

}  // namespace

Rebase rebase_update(std::string_view base_json, std::string_view sent_json,
                     std::string_view current_json, bool status_write) {
  Document base, sent, current;
  if (!base::parse_json(base_json, base) || !base::parse_json(sent_json, sent) ||
      !base::parse_json(current_json, current) || !base.IsObject() || !sent.IsObject() ||
      !current.IsObject()) {
    return {Rebase::Kind::Unreadable, "",
            "the journaled update or the cloud's object cannot be read"};
  }
  Document ours = change(base, sent, status_write);
  if (ours.IsObject() && ours.MemberCount() == 0) return {Rebase::Kind::Nothing, "", ""};
  Document theirs = change(base, current, status_write);
  std::vector<Path> our_fields, their_fields;
  Path prefix;
  leaves(ours, prefix, our_fields);
  if (theirs.IsObject() && theirs.MemberCount() > 0) leaves(theirs, prefix, their_fields);
  std::string clashes;
  for (const Path& a : our_fields) {
    for (const Path& b : their_fields) {
      if (!overlaps(a, b)) continue;
      // Both set it the same way: no conflict.
      const Value* mine = at(sent, a);
      const Value* cloud = at(current, a);
      if ((mine == nullptr && cloud == nullptr) || (mine && cloud && *mine == *cloud)) continue;
      clashes += (clashes.empty() ? "" : ", ") + joined(a);
      break;
    }
  }
  if (!clashes.empty()) {
    return {Rebase::Kind::Conflict, "", "changed both offline and in the cloud: " + clashes};
  }
  Document result;
  result.CopyFrom(current, result.GetAllocator());
  if (Status applied = kube::apply_merge_patch(result, ours); !applied || !result.IsObject()) {
    return {Rebase::Kind::Unreadable, "",
            "the offline change cannot be applied to the cloud's object"};
  }
  if (result == current) return {Rebase::Kind::Nothing, "", ""};
  // The cloud's resourceVersion: a writer between our read and this update makes it a 409 again.
  return {Rebase::Kind::Put, base::to_json(result), ""};
}

}  // namespace yurthub::cache
