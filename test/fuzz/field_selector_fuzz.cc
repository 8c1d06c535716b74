// Fuzz target for kube/selector.h FieldSelector, parsed from clients' fieldSelector parameters
// and evaluated by the offline list/watch path. The input's NUL-separated parts: a selector, a
// second selector, and an object (JSON). Oracles: canonical() parses back to itself; a selector
// covers itself; covers() is sound (when `a` covers `b`, every object `b` matches, `a` matches
// too); an object that matches has the value required_value() names.
#include "kube/selector.h"

#include "base/json_parse.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;
using yurthub::kube::FieldSelector;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  auto parsed = fuzz::parse_selector<FieldSelector>(parts[0]);
  if (!parsed) return 0;
  const FieldSelector* a = &parsed->first;
  const FieldSelector* reparsed = &parsed->second;

  rapidjson::Document object;
  if (!base::parse_json(parts[2], object) || !object.IsObject()) return 0;
  const bool matches = a->matches(object, "", "pods");
  fuzz::check(matches == reparsed->matches(object, "", "pods"), "canonical() matches differently");
  auto b = FieldSelector::parse(parts[1]);
  if (b && a->covers(*b) && b->matches(object, "", "pods")) {
    fuzz::check(matches, "covers() is unsound: b matches, a does not");
  }
  // The cache looks an object up by the name a selector requires: a match must have that name.
  const auto required = a->required_value("metadata.name");
  const auto meta = object.FindMember("metadata");
  if (matches && required && meta != object.MemberEnd() && meta->value.IsObject()) {
    const auto name = meta->value.FindMember("name");
    if (name != meta->value.MemberEnd() && name->value.IsString()) {
      fuzz::check(
          *required == std::string_view(name->value.GetString(), name->value.GetStringLength()),
          "a match without the name required_value() names");
    }
  }
  return 0;
}
