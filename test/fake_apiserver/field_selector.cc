// Field selectors (selectors.h): fields.ParseSelector of k8s.io/apimachinery v0.26 (terms split
// on unescaped commas and sorted, the first operator of `!=`, `==`, `=` found in a term splits
// it, values unescaped), the apiserver's field label conversion, and matching.
#include "test/fake_apiserver/selectors.h"

#include <algorithm>

#include "test/fake_apiserver/field_labels.h"

namespace yurthub::fake {
namespace {

// The comma-separated terms, a backslash-escaped comma kept inside its term (splitTerms).
std::vector<std::string> split_terms(std::string_view s) {
  std::vector<std::string> terms;
  if (s.empty()) return terms;
  std::size_t start = 0;
  bool escaped = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (escaped) {
      escaped = false;
    } else if (s[i] == '\\') {
      escaped = true;
    } else if (s[i] == ',') {
      terms.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.emplace_back(s.substr(start));
  return terms;
}

// UnescapeValue: `\\`, `\,` and `\=` are the only escapes; a bare `,` or `=` is an error (Go
// prints the rune with %v, i.e. as its code point).
Result<std::string> unescape(std::string_view s) {
  std::string out;
  bool escaped = false;
  for (char c : s) {
    if (escaped) {
      if (c != '\\' && c != ',' && c != '=') {
        return make_error(std::string("invalid field selector: invalid escape sequence: \\") + c);
      }
      out += c;
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == ',' || c == '=') {
      return make_error("invalid field selector: unescaped character in value: " +
                        std::to_string(static_cast<int>(c)));
    } else {
      out += c;
    }
  }
  if (escaped) return make_error("invalid field selector: invalid escape sequence: \\");
  return out;
}

}  // namespace

Result<FieldSelector> FieldSelector::parse(std::string_view text) {
  std::vector<std::string> parts = split_terms(text);
  std::sort(parts.begin(), parts.end());
  FieldSelector s;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    std::size_t at = std::string::npos, len = 0;
    for (std::size_t i = 0; i < part.size() && at == std::string::npos; ++i) {
      for (std::string_view op : {"!=", "==", "="}) {
        if (std::string_view(part).substr(i).starts_with(op)) {
          at = i;
          len = op.size();
          break;
        }
      }
    }
    if (at == std::string::npos) {
      return make_error("invalid selector: '" + std::string(text) + "'; can't understand '" + part +
                        "'");
    }
    auto value = unescape(std::string_view(part).substr(at + len));
    if (!value) return value.error();
    s.terms_.push_back(FieldTerm{part.substr(0, at), part[at] != '!', std::move(*value)});
  }
  return s;
}

Status FieldSelector::convert(const ResourceInfo& resource) {
  for (FieldTerm& t : terms_) {
    auto field = convert_field_label(resource, t.field);
    if (!field) return field.error();
    t.field = std::move(*field);
  }
  return {};
}

bool FieldSelector::matches(const rapidjson::Value& object) const {
  for (const FieldTerm& t : terms_) {
    if ((field_value(object, t.field) == t.value) != t.equals) return false;
  }
  return true;
}

}  // namespace yurthub::fake
