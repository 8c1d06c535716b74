// Label and field selectors (see selector.h): parsing, matching against JSON objects, coverage and
// canonical text. The label parser mirrors k8s.io/apimachinery/pkg/labels/selector.go (its lexer
// and recursive-descent parser, including quirks such as `k in ()` meaning `k in ("")`); the field
// parser mirrors pkg/fields/selector.go (splitTerms, splitTerm, UnescapeValue). Called by the
// offline list/watch path, the cache's coverage check and the fake apiserver. Pure.
#include "kube/selector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <tuple>
#include <utility>

#include "kube/field_labels.h"

namespace yurthub::kube {
namespace {

using Op = LabelRequirement::Op;

constexpr size_t kMaxNameLength = 63;     // validation.qualifiedNameMaxLength, LabelValueMaxLength
constexpr size_t kMaxPrefixLength = 253;  // validation.DNS1123SubdomainMaxLength
constexpr const char* kNameRule =
    "consist of alphanumeric characters, '-', '_' or '.', and start and end with an alphanumeric";

// ---- Validation (k8s.io/apimachinery/pkg/util/validation) ----

// qualifiedNameFmt `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` (label names and values), or with
// `dns_label` dns1123LabelFmt `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (parts of a key's prefix).
bool is_name(std::string_view s, bool dns_label) {
  auto edge = [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!dns_label && c >= 'A' && c <= 'Z');
  };
  auto inner = [&](char c) {
    return edge(c) || c == '-' || (!dns_label && (c == '_' || c == '.'));
  };
  return !s.empty() && edge(s.front()) && edge(s.back()) && std::all_of(s.begin(), s.end(), inner);
}

// IsDNS1123Subdomain: at most 253 characters of dot-separated DNS-1123 labels.
bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxPrefixLength) return false;
  while (true) {
    size_t dot = s.find('.');
    if (!is_name(s.substr(0, dot), true)) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// IsQualifiedName / content.IsLabelKey. Returns the problem, or "" if the key is valid.
std::string label_key_problem(std::string_view key) {
  std::string_view name = key;
  if (size_t slash = key.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (name.find('/') != std::string_view::npos) return "a label key may contain at most one '/'";
    if (prefix.empty()) return "prefix part must be non-empty";
    if (!is_dns1123_subdomain(prefix)) {
      return "prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters";
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > kMaxNameLength) return "name part must be no more than 63 characters";
  if (!is_name(name, false)) return std::string("name part must ") + kNameRule;
  return "";
}

// IsValidLabelValue. Returns the problem, or "" if the value is valid (the empty value is).
std::string label_value_problem(std::string_view value) {
  if (value.size() > kMaxNameLength) return "must be no more than 63 characters";
  if (!value.empty() && !is_name(value, false)) return std::string("must be empty or ") + kNameRule;
  return "";
}

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no overflow.
std::optional<int64_t> parse_int64(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// ---- Label selector lexer (labels.Lexer) ----

enum class Token {
  End,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar
};

struct Item {
  Token token;
  std::string_view text;
};

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_special(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

Token special_token(std::string_view s) {
  if (s == "==") return Token::DoubleEquals;
  if (s == "!=") return Token::NotEquals;
  constexpr std::string_view kChars = "=!(),><";
  constexpr Token kTokens[] = {Token::Equals, Token::DoesNotExist, Token::OpenPar, Token::ClosedPar,
                               Token::Comma,  Token::GreaterThan,  Token::LessThan};
  return kTokens[kChars.find(s.front())];
}

// Every single special character is a token, and the only two-character ones are `==` and `!=`,
// so Kubernetes' longest-match loop reduces to one look-ahead character.
std::vector<Item> lex(std::string_view text) {
  std::vector<Item> items;
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && is_whitespace(text[pos])) ++pos;
    if (pos == text.size()) break;
    size_t start = pos;
    if (is_special(text[pos])) {
      std::string_view two = text.substr(pos, 2);
      std::string_view symbol = text.substr(pos, (two == "==" || two == "!=") ? 2 : 1);
      pos += symbol.size();
      items.push_back({special_token(symbol), symbol});
      continue;
    }
    while (pos < text.size() && !is_special(text[pos]) && !is_whitespace(text[pos])) ++pos;
    std::string_view word = text.substr(start, pos - start);
    Token token = word == "in" ? Token::In : word == "notin" ? Token::NotIn : Token::Identifier;
    items.push_back({token, word});
  }
  items.push_back({Token::End, ""});
  return items;
}

// ---- Label selector parser (labels.Parser) ----

// In the Values context `in` and `notin` are plain identifiers (`x in (in)`, `in=notin`).
enum class Context { KeyAndOperator, Values };

Error found(std::string_view text, std::string_view expected) {
  return make_error("found '" + std::string(text) + "', expected: " + std::string(expected));
}

class Parser {
 public:
  explicit Parser(std::vector<Item> items) : items_(std::move(items)) {}

  Result<std::vector<LabelRequirement>> parse();

 private:
  Item lookahead(Context context) const;
  Item consume(Context context);
  Result<LabelRequirement> parse_requirement();
  Result<Op> parse_operator();
  Result<std::vector<std::string>> parse_values();
  Result<std::vector<std::string>> parse_identifiers_list();
  Result<std::vector<std::string>> parse_exact_value();

  std::vector<Item> items_;  // ends with Token::End
  size_t position_ = 0;
};

Item Parser::lookahead(Context context) const {
  Item item = items_[std::min(position_, items_.size() - 1)];
  if (context == Context::Values && (item.token == Token::In || item.token == Token::NotIn)) {
    item.token = Token::Identifier;
  }
  return item;
}

Item Parser::consume(Context context) {
  Item item = lookahead(context);
  if (position_ + 1 < items_.size()) ++position_;  // End is never consumed past
  return item;
}

Result<std::vector<LabelRequirement>> Parser::parse() {
  std::vector<LabelRequirement> requirements;
  while (true) {
    Item item = lookahead(Context::Values);
    if (item.token == Token::End) return requirements;
    if (item.token != Token::Identifier && item.token != Token::DoesNotExist) {
      return found(item.text, "!, identifier, or 'end of string'");
    }
    auto requirement = parse_requirement();
    if (!requirement) {
      return make_error("unable to parse requirement: " + requirement.error().message);
    }
    requirements.push_back(std::move(requirement).value());
    Item next = consume(Context::Values);
    if (next.token == Token::End) return requirements;
    if (next.token != Token::Comma) return found(next.text, "',' or 'end of string'");
    Item after = lookahead(Context::Values);
    if (after.token != Token::Identifier && after.token != Token::DoesNotExist) {
      return found(after.text, "identifier after ','");
    }
  }
}

// Validates like labels.NewRequirement and normalizes single-valued set operators (see header).
Result<LabelRequirement> make_requirement(std::string key, Op op, std::vector<std::string> values) {
  for (const std::string& value : values) {
    if (std::string problem = label_value_problem(value); !problem.empty()) {
      return make_error("invalid label value \"" + value + "\" for key \"" + key +
                        "\": " + problem);
    }
  }
  if ((op == Op::GreaterThan || op == Op::LessThan) && !parse_int64(values.front())) {
    return make_error("for 'Gt', 'Lt' operators, the value must be an integer, got \"" +
                      values.front() + "\"");
  }
  if (op == Op::In && values.size() == 1) op = Op::Equals;
  if (op == Op::NotIn && values.size() == 1) op = Op::NotEquals;
  return LabelRequirement{std::move(key), op, std::move(values)};
}

Result<LabelRequirement> Parser::parse_requirement() {
  Item item = consume(Context::Values);
  bool does_not_exist = item.token == Token::DoesNotExist;
  if (does_not_exist) item = consume(Context::Values);
  if (item.token != Token::Identifier) return found(item.text, "identifier");
  std::string key(item.text);
  if (std::string problem = label_key_problem(key); !problem.empty()) {
    return make_error("invalid label key \"" + key + "\": " + problem);
  }
  // Like Kubernetes, `!key` ends the requirement whatever follows; the caller then rejects
  // anything but ',' or the end.
  if (does_not_exist) return LabelRequirement{std::move(key), Op::DoesNotExist, {}};
  Token next = lookahead(Context::Values).token;
  if (next == Token::End || next == Token::Comma) {
    return LabelRequirement{std::move(key), Op::Exists, {}};
  }
  auto op = parse_operator();
  if (!op) return op.error();
  auto values = (*op == Op::In || *op == Op::NotIn) ? parse_values() : parse_exact_value();
  if (!values) return values.error();
  return make_requirement(std::move(key), *op, std::move(values).value());
}

Result<Op> Parser::parse_operator() {
  constexpr std::pair<Token, Op> kOperators[] = {{Token::In, Op::In},
                                                 {Token::NotIn, Op::NotIn},
                                                 {Token::Equals, Op::Equals},
                                                 {Token::DoubleEquals, Op::Equals},
                                                 {Token::NotEquals, Op::NotEquals},
                                                 {Token::GreaterThan, Op::GreaterThan},
                                                 {Token::LessThan, Op::LessThan}};
  Item item = consume(Context::KeyAndOperator);
  for (auto [token, op] : kOperators) {
    if (item.token == token) return op;
  }
  return found(item.text, "in, notin, =, ==, !=, gt, lt");
}

Result<std::vector<std::string>> Parser::parse_values() {
  Item item = consume(Context::Values);
  if (item.token != Token::OpenPar) return found(item.text, "'('");
  Item next = lookahead(Context::Values);
  if (next.token == Token::ClosedPar) {  // `()` is the set {""}
    consume(Context::Values);
    return std::vector<std::string>{""};
  }
  if (next.token != Token::Identifier && next.token != Token::Comma) {
    return found(next.text, "',', ')' or identifier");
  }
  auto values = parse_identifiers_list();
  if (!values) return values;
  if (Item close = consume(Context::Values); close.token != Token::ClosedPar) {
    return found(close.text, "')'");
  }
  return values;
}

// A possibly empty list of comma-separated, possibly empty identifiers: `(a,,b)`, `(,a)` and
// `(a,)` all contain "" (labels.parseIdentifiersList).
Result<std::vector<std::string>> Parser::parse_identifiers_list() {
  std::set<std::string> values;
  while (true) {
    Item item = consume(Context::Values);
    Item next = lookahead(Context::Values);
    if (item.token == Token::Identifier) {
      values.emplace(item.text);
      if (next.token == Token::ClosedPar) break;
      if (next.token != Token::Comma) return found(next.text, "',' or ')'");
    } else if (item.token == Token::Comma) {
      if (values.empty() || next.token == Token::ClosedPar || next.token == Token::Comma) {
        values.emplace("");
      }
      if (next.token == Token::ClosedPar) break;
    } else {
      return found(item.text, "',', or identifier");
    }
  }
  return std::vector<std::string>(values.begin(), values.end());
}

Result<std::vector<std::string>> Parser::parse_exact_value() {
  Token next = lookahead(Context::Values).token;
  if (next == Token::End || next == Token::Comma) return std::vector<std::string>{""};
  Item item = consume(Context::Values);
  if (item.token != Token::Identifier) return found(item.text, "identifier");
  return std::vector<std::string>{std::string(item.text)};
}

// ---- Label matching, coverage and text ----

// A label's value; a non-string value (not valid Kubernetes) is treated as absent.
std::optional<std::string_view> lookup_label(const rapidjson::Value* labels, std::string_view key) {
  if (labels == nullptr || !labels->IsObject()) return std::nullopt;
  rapidjson::Value name(rapidjson::StringRef(key.data(), key.size()));
  auto it = labels->FindMember(name);
  if (it == labels->MemberEnd() || !it->value.IsString()) return std::nullopt;
  return std::string_view(it->value.GetString(), it->value.GetStringLength());
}

bool contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool compare_int(Op op, std::string_view label, std::string_view bound) {
  auto lhs = parse_int64(label);
  auto rhs = parse_int64(bound);
  if (!lhs || !rhs) return false;
  return op == Op::GreaterThan ? *lhs > *rhs : *lhs < *rhs;
}

// labels.Requirement.Matches.
bool requirement_matches(const LabelRequirement& r, const rapidjson::Value* labels) {
  std::optional<std::string_view> value = lookup_label(labels, r.key);
  if (r.op == Op::Exists) return value.has_value();
  if (r.op == Op::DoesNotExist) return !value;
  if (r.op == Op::NotEquals || r.op == Op::NotIn) {
    return !value || !contains(r.values, *value);  // an absent key matches
  }
  if (r.op == Op::GreaterThan || r.op == Op::LessThan) {
    return value && compare_int(r.op, *value, r.values.front());
  }
  return value && contains(r.values, *value);  // Equals, In
}

bool disjoint(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::none_of(a.begin(), a.end(), [&](const std::string& v) { return contains(b, v); });
}

// a ⊆ b, for sorted vectors.
bool subset(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

// True if every label set satisfying `n` satisfies `r` (a sound, incomplete implication test).
bool implies(const LabelRequirement& n, const LabelRequirement& r) {
  if (n.key != r.key) return false;
  if (n == r) return true;
  bool n_in = n.op == Op::Equals || n.op == Op::In;
  bool n_not_in = n.op == Op::NotEquals || n.op == Op::NotIn;
  // Every operator but the negative ones requires the key to exist.
  if (r.op == Op::Exists) return !n_not_in && n.op != Op::DoesNotExist;
  if (r.op == Op::Equals || r.op == Op::In) return n_in && subset(n.values, r.values);
  if (r.op == Op::NotEquals || r.op == Op::NotIn) {
    return n.op == Op::DoesNotExist || (n_not_in && subset(r.values, n.values)) ||
           (n_in && disjoint(n.values, r.values));
  }
  if (n.op != r.op || r.op == Op::DoesNotExist) return false;
  // Same comparison: `k>7` implies `k>5`, `k<3` implies `k<5`.
  auto n_bound = parse_int64(n.values.front());
  auto r_bound = parse_int64(r.values.front());
  if (!n_bound || !r_bound) return false;
  return r.op == Op::GreaterThan ? *n_bound >= *r_bound : *n_bound <= *r_bound;
}

std::string requirement_text(const LabelRequirement& r) {
  // Indexed by Op: Equals, NotEquals, In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan.
  constexpr const char* kSeparators[] = {"=", "!=", " in (", " notin (", "", "", ">", "<"};
  std::string out = (r.op == Op::DoesNotExist ? "!" : "") + r.key;
  out += kSeparators[static_cast<int>(r.op)];
  for (size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i];
  if (r.op == Op::In || r.op == Op::NotIn) out += ')';
  return out;
}

// ---- Field selector helpers (fields.splitTerms, splitTerm, UnescapeValue) ----

// Splits on commas not escaped by a backslash; escapes stay in the terms.
std::vector<std::string_view> split_terms(std::string_view text) {
  std::vector<std::string_view> terms;
  if (text.empty()) return terms;
  size_t start = 0;
  bool in_slash = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_slash) {
      in_slash = false;
    } else if (text[i] == '\\') {
      in_slash = true;
    } else if (text[i] == ',') {
      terms.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(text.substr(start));
  return terms;
}

// Splits at the first operator; `!=` then `==` then `=` are tried at each position.
std::optional<FieldRequirement> split_term(std::string_view term, std::string_view* raw_value) {
  for (size_t i = 0; i < term.size(); ++i) {
    std::string_view rest = term.substr(i);
    for (std::string_view op : {"!=", "==", "="}) {
      if (rest.substr(0, op.size()) == op) {
        *raw_value = rest.substr(op.size());
        return FieldRequirement{std::string(term.substr(0, i)), op != "!=", ""};
      }
    }
  }
  return std::nullopt;
}

Result<std::string> unescape_value(std::string_view raw) {
  std::string value;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == ',' || c == '=') return make_error("unescaped '" + std::string(1, c) + "' in value");
    if (c == '\\') {
      if (i + 1 == raw.size()) return make_error("invalid escape sequence: \\");
      c = raw[++i];
      if (c != '\\' && c != ',' && c != '=') {
        return make_error("invalid escape sequence: \\" + std::string(1, c));
      }
    }
    value += c;
  }
  return value;
}

std::string escape_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

// Sorts by the tuple `order` returns and drops duplicates.
template <class T, class Order>
void sort_unique(std::vector<T>& items, Order order) {
  std::sort(items.begin(), items.end(),
            [&](const T& a, const T& b) { return order(a) < order(b); });
  items.erase(std::unique(items.begin(), items.end()), items.end());
}

}  // namespace

// ---- LabelSelector ----

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return make_error("invalid label selector \"" + std::string(text) + "\": " + why);
  };
  // Go's lexer treats a NUL byte as an end of input mid-string; refuse it instead of guessing.
  if (text.find('\0') != std::string_view::npos) return fail("NUL byte in selector");
  auto requirements = Parser(lex(text)).parse();
  if (!requirements) return fail(requirements.error().message);
  LabelSelector selector;
  selector.requirements_ = std::move(requirements).value();
  sort_unique(selector.requirements_,
              [](const LabelRequirement& r) { return std::tie(r.key, r.op, r.values); });
  return selector;
}

bool LabelSelector::matches(const rapidjson::Value* labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const LabelRequirement& r) { return requirement_matches(r, labels); });
}

bool LabelSelector::matches_object(const rapidjson::Value& object) const {
  const rapidjson::Value* labels = nullptr;
  if (object.IsObject()) {
    auto metadata = object.FindMember("metadata");
    if (metadata != object.MemberEnd() && metadata->value.IsObject()) {
      auto it = metadata->value.FindMember("labels");
      if (it != metadata->value.MemberEnd()) labels = &it->value;
    }
  }
  return matches(labels);
}

bool LabelSelector::covers(const LabelSelector& narrower) const {
  const auto& theirs = narrower.requirements_;
  return std::all_of(requirements_.begin(), requirements_.end(), [&](const LabelRequirement& r) {
    return std::any_of(theirs.begin(), theirs.end(),
                       [&](const LabelRequirement& n) { return implies(n, r); });
  });
}

std::string LabelSelector::canonical() const {
  std::string out;
  for (const LabelRequirement& r : requirements_) {
    if (!out.empty()) out += ',';
    out += requirement_text(r);
  }
  return out;
}

// ---- FieldSelector ----

Result<FieldSelector> FieldSelector::parse(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return make_error("invalid field selector \"" + std::string(text) + "\": " + why);
  };
  FieldSelector selector;
  for (std::string_view term : split_terms(text)) {
    if (term.empty()) continue;  // `a=b,,c=d` and a trailing comma are accepted
    std::string_view raw_value;
    std::optional<FieldRequirement> requirement = split_term(term, &raw_value);
    if (!requirement) return fail("can't understand \"" + std::string(term) + "\"");
    auto value = unescape_value(raw_value);
    if (!value) return fail(value.error().message);
    requirement->value = std::move(value).value();
    selector.requirements_.push_back(std::move(*requirement));
  }
  sort_unique(selector.requirements_,
              [](const FieldRequirement& r) { return std::tie(r.path, r.equals, r.value); });
  return selector;
}

bool FieldSelector::matches(const rapidjson::Value& object, std::string_view group,
                            std::string_view resource) const {
  return std::all_of(requirements_.begin(), requirements_.end(), [&](const FieldRequirement& r) {
    return (selectable_field(group, resource, object, r.path) == r.value) == r.equals;
  });
}

bool FieldSelector::covers(const FieldSelector& narrower) const {
  const auto& theirs = narrower.requirements_;
  return std::all_of(requirements_.begin(), requirements_.end(), [&](const FieldRequirement& r) {
    return std::any_of(theirs.begin(), theirs.end(), [&](const FieldRequirement& n) {
      // `p=y` implies `p!=x` for y != x.
      return n == r || (!r.equals && n.equals && n.path == r.path && n.value != r.value);
    });
  });
}

std::string FieldSelector::canonical() const {
  std::string out;
  for (const FieldRequirement& r : requirements_) {
    if (!out.empty()) out += ',';
    out += r.path + (r.equals ? "=" : "!=") + escape_value(r.value);
  }
  return out;
}

std::optional<std::string> FieldSelector::required_value(std::string_view path) const {
  for (const FieldRequirement& r : requirements_) {
    if (r.equals && r.path == path) return r.value;
  }
  return std::nullopt;
}

}  // namespace yurthub::kube
