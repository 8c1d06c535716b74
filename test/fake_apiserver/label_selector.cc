// Label selectors (selectors.h): the lexer and recursive-descent parser of k8s.io/apimachinery
// pkg/labels (selector.go, v0.26), the validation of keys and values
// (pkg/util/validation: IsQualifiedName, IsValidLabelValue) with its messages, and matching.
#include "test/fake_apiserver/selectors.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace yurthub::fake {
namespace {

enum class Tok {
  End,
  Ident,
  In,
  NotIn,
  Comma,
  Open,
  Close,
  Bang,
  Eq,
  DoubleEq,
  NotEq,
  Gt,
  Lt,
  Error
};

struct Token {
  Tok tok;
  std::string text;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_symbol(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::optional<Tok> symbol_token(std::string_view s) {
  if (s == "(") return Tok::Open;
  if (s == ")") return Tok::Close;
  if (s == ",") return Tok::Comma;
  if (s == "!") return Tok::Bang;
  if (s == "=") return Tok::Eq;
  if (s == "==") return Tok::DoubleEq;
  if (s == "!=") return Tok::NotEq;
  if (s == ">") return Tok::Gt;
  if (s == "<") return Tok::Lt;
  return std::nullopt;
}

// The whole input as tokens, ending with End (or with the first Error). A NUL byte ends the input,
// as the Go lexer's read() returns 0 at the end.
std::vector<Token> lex(std::string_view s) {
  s = s.substr(0, s.find('\0'));
  std::vector<Token> out;
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i == s.size()) break;
    if (is_symbol(s[i])) {
      // The longest run of symbols that is still a token (scanSpecialSymbol).
      std::string run;
      std::optional<Tok> best;
      std::string best_text;
      while (i < s.size() && is_symbol(s[i])) {
        run += s[i];
        if (auto t = symbol_token(run)) {
          best = t;
          best_text = run;
        } else if (best) {
          break;
        }
        ++i;
      }
      if (!best) {
        out.push_back({Tok::Error, "error expected: keyword found '" + run + "'"});
        return out;
      }
      out.push_back({*best, best_text});
      continue;
    }
    std::size_t start = i;
    while (i < s.size() && !is_symbol(s[i]) && !is_space(s[i])) ++i;
    std::string word(s.substr(start, i - start));
    out.push_back({word == "in" ? Tok::In : word == "notin" ? Tok::NotIn : Tok::Ident, word});
  }
  out.push_back({Tok::End, ""});
  return out;
}

// ---- validation messages (k8s.io/apimachinery/pkg/util/validation) ----

std::string regex_error(std::string msg, std::string_view regex,
                        std::initializer_list<std::string_view> examples) {
  msg += " (e.g. ";
  bool first = true;
  for (std::string_view e : examples) {
    if (!first) msg += " or ";
    first = false;
    msg += "'" + std::string(e) + "', ";
  }
  return msg + "regex used for validation is '" + std::string(regex) + "')";
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_name(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*
bool is_subdomain(std::string_view s) {
  auto lower = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  while (true) {
    std::size_t dot = s.find('.');
    std::string_view label = s.substr(0, dot);
    if (label.empty() || !lower(label.front()) || !lower(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [&](char c) { return lower(c) || c == '-'; })) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

constexpr std::string_view kNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kNameRegex = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

std::vector<std::string> qualified_name_errors(std::string_view key) {
  std::vector<std::string> errs;
  std::size_t slashes = std::count(key.begin(), key.end(), '/');
  std::string_view name = key;
  if (slashes > 1) {
    return {"a qualified name " +
            regex_error(std::string(kNameMsg), kNameRegex, {"MyName", "my.name", "123-abc"}) +
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
  }
  if (slashes == 1) {
    std::string_view prefix = key.substr(0, key.find('/'));
    name = key.substr(key.find('/') + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253) errs.push_back("prefix part must be no more than 253 characters");
      if (!is_subdomain(prefix)) {
        errs.push_back(
            "prefix part " +
            regex_error("a lowercase RFC 1123 subdomain must consist of lower case "
                        "alphanumeric characters, '-' or '.', and must start and end "
                        "with an alphanumeric character",
                        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
                        {"example.com"}));
      }
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part must be no more than 63 characters");
  }
  if (!is_name(name)) {
    errs.push_back("name part " + regex_error(std::string(kNameMsg), kNameRegex,
                                              {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> label_value_errors(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back("must be no more than 63 characters");
  if (!v.empty() && !is_name(v)) {
    errs.push_back(regex_error(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character",
        "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + parts[i];
  return out;
}

// field.Invalid(path, value, detail).Error(); a nil path prints as "<nil>".
std::string invalid(std::string_view path, std::string_view value, std::string_view detail) {
  std::string quoted;
  for (char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return std::string(path) + ": Invalid value: \"" + quoted + "\": " + std::string(detail);
}

std::optional<long long> parse_int64(std::string_view s) {
  long long v = 0;
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto [end, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

using Op = LabelRequirement::Op;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  Result<std::vector<LabelRequirement>> parse();

 private:
  // In the values context `in` and `notin` are identifiers.
  const Token& peek() const { return tokens_[pos_]; }
  Tok peek_value() const { return value_tok(peek().tok); }
  static Tok value_tok(Tok t) { return t == Tok::In || t == Tok::NotIn ? Tok::Ident : t; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  Result<LabelRequirement> requirement();
  Result<std::vector<std::string>> set_values();
  Result<std::vector<std::string>> identifiers();

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

Error found(const std::string& text, std::string_view expected) {
  return make_error("found '" + text + "', expected: " + std::string(expected));
}

Result<std::vector<LabelRequirement>> Parser::parse() {
  std::vector<LabelRequirement> out;
  while (true) {
    Tok t = peek_value();
    if (t == Tok::End) return out;
    if (t != Tok::Ident && t != Tok::Bang)
      return found(peek().text, "!, identifier, or 'end of string'");
    auto r = requirement();
    if (!r) return make_error("unable to parse requirement: " + r.error().message);
    out.push_back(std::move(*r));
    const Token& after = next();
    if (after.tok == Tok::End) return out;
    if (after.tok != Tok::Comma) return found(after.text, "',' or 'end of string'");
    if (peek_value() != Tok::Ident && peek_value() != Tok::Bang) {
      return found(peek().text, "identifier after ','");
    }
  }
}

Result<LabelRequirement> Parser::requirement() {
  LabelRequirement r;
  bool negated = false;
  Token key = next();
  if (key.tok == Tok::Bang) {
    negated = true;
    key = next();
  }
  if (value_tok(key.tok) != Tok::Ident) return found(key.text, "identifier");
  if (auto errs = qualified_name_errors(key.text); !errs.empty()) {
    return make_error(invalid("<nil>", key.text, join(errs, "; ")));
  }
  r.key = key.text;
  Tok t = peek_value();
  if (negated || t == Tok::End || t == Tok::Comma) {
    r.op = negated ? Op::DoesNotExist : Op::Exists;
    return r;
  }
  const Token& op = next();  // the operator context: `in`/`notin` are keywords here
  switch (op.tok) {
    case Tok::In:
      r.op = Op::In;
      break;
    case Tok::NotIn:
      r.op = Op::NotIn;
      break;
    case Tok::Eq:
    case Tok::DoubleEq:
      r.op = Op::Equals;
      break;
    case Tok::NotEq:
      r.op = Op::NotEquals;
      break;
    case Tok::Gt:
      r.op = Op::GreaterThan;
      break;
    case Tok::Lt:
      r.op = Op::LessThan;
      break;
    default:
      return found(op.text, "in, notin, =, ==, !=, gt, lt");
  }
  if (r.op == Op::In || r.op == Op::NotIn) {
    auto values = set_values();
    if (!values) return values.error();
    r.values = std::move(*values);
  } else if (peek_value() == Tok::End || peek_value() == Tok::Comma) {
    r.values = {""};
  } else if (const Token& v = next(); value_tok(v.tok) == Tok::Ident) {
    r.values = {v.text};
  } else {
    return found(v.text, "identifier");
  }
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  // NewRequirement's checks, aggregated as field.ErrorList.ToAggregate() prints them.
  std::vector<std::string> errs;
  for (std::size_t i = 0; i < r.values.size(); ++i) {
    std::string at = "values[" + std::to_string(i) + "]";
    if ((r.op == Op::GreaterThan || r.op == Op::LessThan) && !parse_int64(r.values[i])) {
      errs.push_back(
          invalid(at, r.values[i], "for 'Gt', 'Lt' operators, the value must be an integer"));
    }
    if (auto bad = label_value_errors(r.values[i]); !bad.empty()) {
      errs.push_back(invalid(at + "[" + r.key + "]", r.values[i], join(bad, "; ")));
    }
  }
  if (errs.size() == 1) return make_error(errs[0]);
  if (!errs.empty()) return make_error("[" + join(errs, ", ") + "]");
  return r;
}

Result<std::vector<std::string>> Parser::set_values() {
  const Token& open = next();
  if (open.tok != Tok::Open) return make_error("found '" + open.text + "' expected: '('");
  std::string seen = peek().text;
  switch (peek_value()) {
    case Tok::Close:
      next();
      return std::vector<std::string>{""};
    case Tok::Ident:
    case Tok::Comma: {
      auto values = identifiers();
      if (!values) return values;
      if (next().tok != Tok::Close) return found(seen, "')'");
      return values;
    }
    default:
      return found(seen, "',', ')' or identifier");
  }
}

Result<std::vector<std::string>> Parser::identifiers() {
  std::vector<std::string> values;
  while (true) {
    const Token& t = next();
    if (value_tok(t.tok) == Tok::Ident) {
      values.push_back(t.text);
      if (peek_value() == Tok::Comma) continue;
      if (peek_value() == Tok::Close) return values;
      return found(peek().text, "',' or ')'");
    }
    if (t.tok != Tok::Comma) return found(t.text, "',', or identifier");
    // Empty members: `(,a)`, `(a,)` and `(a,,b)` all hold "".
    if (values.empty()) values.push_back("");
    if (peek_value() == Tok::Close) {
      values.push_back("");
      return values;
    }
    if (peek_value() == Tok::Comma) {
      next();
      values.push_back("");
    }
  }
}

}  // namespace

bool LabelRequirement::matches(const rapidjson::Value* labels) const {
  const rapidjson::Value* v = nullptr;
  if (labels != nullptr && labels->IsObject()) {
    auto it = labels->FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
    if (it != labels->MemberEnd() && it->value.IsString()) v = &it->value;
  }
  std::string_view have = v ? std::string_view(v->GetString(), v->GetStringLength()) : "";
  auto listed = [&] { return std::find(values.begin(), values.end(), have) != values.end(); };
  switch (op) {
    case Op::Exists:
      return v != nullptr;
    case Op::DoesNotExist:
      return v == nullptr;
    case Op::Equals:
    case Op::In:
      return v != nullptr && listed();
    case Op::NotEquals:
    case Op::NotIn:
      return v == nullptr || !listed();
    case Op::GreaterThan:
    case Op::LessThan: {
      auto l = v ? parse_int64(have) : std::nullopt;
      auto r = values.size() == 1 ? parse_int64(values[0]) : std::nullopt;
      if (!l || !r) return false;
      return op == Op::GreaterThan ? *l > *r : *l < *r;
    }
  }
  return false;
}

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  std::vector<Token> tokens = lex(text);
  if (tokens.back().tok == Tok::Error) tokens.push_back({Tok::End, ""});
  auto requirements = Parser(std::move(tokens)).parse();
  if (!requirements) return requirements.error();
  LabelSelector s;
  s.requirements_ = std::move(*requirements);
  std::stable_sort(s.requirements_.begin(), s.requirements_.end(),
                   [](const auto& a, const auto& b) { return a.key < b.key; });
  return s;
}

bool LabelSelector::matches(const rapidjson::Value& object) const {
  if (requirements_.empty()) return true;
  const rapidjson::Value* labels = nullptr;
  if (object.IsObject()) {
    auto md = object.FindMember("metadata");
    if (md != object.MemberEnd() && md->value.IsObject()) {
      auto l = md->value.FindMember("labels");
      if (l != md->value.MemberEnd()) labels = &l->value;
    }
  }
  for (const auto& r : requirements_) {
    if (!r.matches(labels)) return false;
  }
  return true;
}

}  // namespace yurthub::fake
