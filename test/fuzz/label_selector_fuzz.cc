// Fuzz target for kube/selector.h LabelSelector, parsed from clients' labelSelector parameters
// and evaluated by the offline list/watch path. The input's NUL-separated parts: a selector, a
// second selector, and a labels object (JSON). Oracles: canonical() parses back to itself; a
// selector covers itself; covers() is sound (when `a` covers `b`, every label set `b` matches,
// `a` matches too), since the cache answers a narrower request from a wider list with it.
#include "kube/selector.h"

#include "base/json_parse.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;
using yurthub::kube::LabelSelector;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  auto parsed = fuzz::parse_selector<LabelSelector>(parts[0]);
  if (!parsed) return 0;
  const LabelSelector* a = &parsed->first;
  const LabelSelector* reparsed = &parsed->second;

  rapidjson::Document labels;
  const bool have_labels = base::parse_json(parts[2], labels) && labels.IsObject();
  const rapidjson::Value* set = have_labels ? &labels : nullptr;
  fuzz::check(a->matches(set) == reparsed->matches(set), "canonical() matches differently");
  auto b = LabelSelector::parse(parts[1]);
  if (b && a->covers(*b) && b->matches(set)) {
    fuzz::check(a->matches(set), "covers() is unsound: b matches, a does not");
  }
  return 0;
}
