// Go-style printing of JSON values; see go_format.h.
#include "test/fake_apiserver/go_format.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

namespace yurthub::fake {

std::string go_format(const rapidjson::Value& value) {
  if (value.IsNull()) return "<nil>";
  if (value.IsBool()) return value.GetBool() ? "true" : "false";
  if (value.IsString()) return std::string(value.GetString(), value.GetStringLength());
  if (value.IsInt64()) return std::to_string(value.GetInt64());
  if (value.IsUint64()) return std::to_string(value.GetUint64());
  if (value.IsNumber()) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value.GetDouble());
    return ec == std::errc() ? std::string(buf, end) : "NaN";
  }
  std::string out;
  if (value.IsArray()) {
    out = "[";
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      if (i > 0) out += ' ';
      out += go_format(value[i]);
    }
    return out + "]";
  }
  std::vector<const rapidjson::Value::Member*> members;
  for (const auto& m : value.GetObject()) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
    return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
           std::string_view(b->name.GetString(), b->name.GetStringLength());
  });
  out = "map[";
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i > 0) out += ' ';
    out += go_format(members[i]->name) + ":" + go_format(members[i]->value);
  }
  return out + "]";
}

std::string go_type(const rapidjson::Value& value) {
  if (value.IsObject()) return "map[string]interface {}";
  if (value.IsArray()) return "[]interface {}";
  if (value.IsString()) return "string";
  if (value.IsInt64() || value.IsUint64()) return "int64";
  if (value.IsNumber()) return "float64";
  if (value.IsBool()) return "bool";
  return "<nil>";
}

}  // namespace yurthub::fake
