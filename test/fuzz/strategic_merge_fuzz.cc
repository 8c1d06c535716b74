// Fuzz target for kube/strategic_merge.h, which applies kubelet's pod and node status patches to
// cached objects while the node is offline. The input's NUL-separated parts: the target object
// and the patch (JSON). Oracles: a patched object writes and parses back within the parse bound,
// and no `$` directive survives in it.
#include "kube/strategic_merge.h"

#include "base/json_parse.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

// True if a member name starting with "$" (a directive) is anywhere in `v`.
bool has_directive(const rapidjson::Value& v) {
  if (v.IsArray()) {
    for (const auto& e : v.GetArray()) {
      if (has_directive(e)) return true;
    }
  }
  if (!v.IsObject()) return false;
  for (const auto& m : v.GetObject()) {
    if ((m.name.GetStringLength() > 0 && m.name.GetString()[0] == '$') || has_directive(m.value)) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 2);
  rapidjson::Document target, patch;
  if (!base::parse_json(parts[0], target) || !base::parse_json(parts[1], patch)) return 0;
  const bool target_had_directive = has_directive(target);
  if (!kube::apply_strategic_merge_patch(target, patch)) return 0;
  rapidjson::Document again;
  fuzz::check(static_cast<bool>(base::parse_json(base::to_json(target), again)),
              "a patched object does not parse back");
  fuzz::check(target_had_directive || !has_directive(target), "a directive survived the merge");
  return 0;
}
