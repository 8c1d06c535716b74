// The fake apiserver's own label and field selectors, written from k8s.io/apimachinery v0.26
// (pkg/labels: lexer, parser, Requirement validation and matching; pkg/fields: ParseSelector and
// its escaping) and the apiserver's per-kind field label conversions (field_labels.h),
// independently of the hub's cache/ code. Errors are the apiserver's 400 messages. Used by the
// list, deletecollection and watch handlers and by the Store and Watcher to filter objects.
// Pure values; safe for concurrent const use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::fake {

struct ResourceInfo;

// `key op values`: Exists/DoesNotExist have no value, Equals/NotEquals/GreaterThan/LessThan one,
// In/NotIn one or more (`k in ()` is `k in ("")`, as in labels.Parse).
struct LabelRequirement {
  enum class Op { Exists, DoesNotExist, Equals, NotEquals, In, NotIn, GreaterThan, LessThan };
  std::string key;
  Op op = Op::Exists;
  std::vector<std::string> values;  // sorted, distinct

  // `labels`: the object's metadata.labels, or nullptr when it has none.
  bool matches(const rapidjson::Value* labels) const;
};

// The AND of label requirements; the empty selector matches everything.
class LabelSelector {
 public:
  // labels.Parse: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>5`, `k<5`,
  // comma separated, with keys and values validated as label keys and values. The error is the
  // apiserver's, e.g. `unable to parse requirement: <nil>: Invalid value: "a b": ...` or
  // `found '=', expected: ',' or 'end of string'`.
  static Result<LabelSelector> parse(std::string_view text);

  bool empty() const { return requirements_.empty(); }
  // Evaluates against object["metadata"]["labels"].
  bool matches(const rapidjson::Value& object) const;
  const std::vector<LabelRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<LabelRequirement> requirements_;  // sorted by key, as labels.Parse leaves them
};

struct FieldTerm {
  std::string field;   // e.g. "spec.nodeName"
  bool equals = true;  // `=`/`==` (true) or `!=`
  std::string value;   // unescaped
};

// The AND of field terms; the empty selector matches everything.
class FieldSelector {
 public:
  // fields.ParseSelector: comma-separated `field=value`, `field==value`, `field!=value`; `\,`,
  // `\=` and `\\` escape a value's characters. Fields are not checked here (see convert()).
  static Result<FieldSelector> parse(std::string_view text);

  // What the apiserver does next: checks each field against `resource`'s field label
  // conversion (the legacy pods "spec.host" becomes "spec.nodeName"). The error is its 400
  // message, e.g. "field label not supported: spec.bogus".
  Status convert(const ResourceInfo& resource);

  bool empty() const { return terms_.empty(); }
  // A missing field compares as "" (a node without spec.unschedulable as "false"), as in the
  // field sets the apiserver's storage selects on.
  bool matches(const rapidjson::Value& object) const;
  const std::vector<FieldTerm>& terms() const { return terms_; }

 private:
  std::vector<FieldTerm> terms_;
};

}  // namespace yurthub::fake
