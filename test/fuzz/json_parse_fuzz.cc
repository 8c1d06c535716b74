// Fuzz target for base/json_parse.h, the depth-bounded parse every untrusted JSON goes through.
// Oracles: parse_json and parse_insitu accept the same texts and build the same document; what
// they accept writes back (to_json) as JSON that parses to the same text; nothing overflows the
// stack, however deep the input nests.
#include "base/json_parse.h"

#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  rapidjson::Document copied, insitu;
  std::string scratch;
  const bool ok = static_cast<bool>(base::parse_json(text, copied));
  fuzz::check(ok == static_cast<bool>(base::parse_insitu(text, scratch, insitu)),
              "parse_json and parse_insitu disagree");
  if (!ok) return 0;
  const std::string json = base::to_json(copied);
  fuzz::check(json == base::to_json(insitu), "the two parses built different documents");
  rapidjson::Document again;
  fuzz::check(static_cast<bool>(base::parse_json(json, again)), "to_json wrote unparseable JSON");
  fuzz::check(base::to_json(again) == json, "to_json of a reparse differs");
  return 0;
}
