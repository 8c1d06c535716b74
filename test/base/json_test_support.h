// Test support: JSON read and written the hub's own way (base/json_parse.h), for every test that
// builds or checks JSON, so no test carries its own parser. Header-only.
#pragma once

#include <string_view>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "base/json_parse.h"

namespace yurthub::test_support {

// `text` parsed by base::parse_json (bounded depth). Not JSON: a test failure naming the text,
// and a null document (so IsObject() and friends are false, as a test then expects).
inline rapidjson::Document parse_json(std::string_view text) {
  rapidjson::Document doc;
  const Status parsed = base::parse_json(text, doc);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message)
                      << " in test JSON: " << text.substr(0, 300);
  return doc;
}

// The compact JSON of `value`.
using base::to_json;

}  // namespace yurthub::test_support
