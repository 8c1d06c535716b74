// Kubernetes label and field selectors, parsed from the query-string syntax and evaluated against
// JSON objects (RapidJSON). Used by the offline list/watch path (a list is served from the cache by
// evaluating the request's selectors locally), by the cache to decide whether a cached list covers
// a request, and by the fake apiserver in test/. Pure; thread-safe for concurrent const use.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::kube {

// One label requirement, e.g. `app in (web,db)`. Parsing normalizes `==` to Equals, a one-value
// `in (v)` to Equals and a one-value `notin (v)` to NotEquals (they match the same objects).
// GreaterThan/LessThan are Kubernetes' `k>5` / `k<5` (integer comparison, key must exist).
struct LabelRequirement {
  enum class Op { Equals, NotEquals, In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan };
  std::string key;
  Op op = Op::Exists;
  // Sorted, unique; one value for Equals/NotEquals/GreaterThan/LessThan, two or more for
  // In/NotIn, none for Exists/DoesNotExist.
  std::vector<std::string> values;
  bool operator==(const LabelRequirement&) const = default;
};

// A label selector: the AND of its requirements. The empty selector matches everything.
// Syntax (k8s.io/apimachinery/pkg/labels): `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
// `k` (exists), `!k` (does not exist), `k>5`, `k<5`, joined by commas; whitespace around tokens is
// allowed. Keys and values are validated like Kubernetes (qualified names, label values). As in
// Kubernetes, `k in ()` is accepted and means `k in ("")`, and `k=` means the empty value.
class LabelSelector {
 public:
  static Result<LabelSelector> parse(std::string_view text);

  // `labels` is the object's metadata.labels (an object), or null/absent (no labels).
  bool matches(const rapidjson::Value* labels) const;
  // Convenience: evaluates against object["metadata"]["labels"].
  bool matches_object(const rapidjson::Value& object) const;
  bool empty() const { return requirements_.empty(); }
  // True if every object matching `narrower` also matches this selector (sufficient, sound test:
  // every requirement of this selector appears in `narrower` or is implied by one of its
  // requirements on the same key, e.g. `a in (x,y)` by `a=x`). The empty selector covers
  // everything. A false result only means "not proven".
  bool covers(const LabelSelector& narrower) const;
  // A canonical text form (requirements sorted by key, then op), equal for equivalent inputs.
  std::string canonical() const;
  const std::vector<LabelRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<LabelRequirement> requirements_;  // sorted
};

// One field requirement, e.g. `spec.nodeName=edge-1`.
struct FieldRequirement {
  std::string path;    // dotted JSON path, e.g. "spec.nodeName", "metadata.name"
  bool equals = true;  // `=`/`==` (true) or `!=` (false)
  std::string value;
  bool operator==(const FieldRequirement&) const = default;
};

// A field selector: the AND of `path=value`, `path==value`, `path!=value` terms, comma separated
// (k8s.io/apimachinery/pkg/fields; values may escape `\,` `\=` `\\`). A path compares as the
// apiserver's field set for the object's resource gives it (kube::selectable_field in
// field_labels.h: a missing string field is "", so `spec.nodeName=` matches unscheduled pods; a
// node's missing spec.unschedulable is "false"). Like fields.ParseSelector, terms are not trimmed
// and paths are not validated here (the apiserver rejects unsupported field labels per resource,
// later; see unsupported_field_label).
class FieldSelector {
 public:
  static Result<FieldSelector> parse(std::string_view text);

  // Whether `object` (v1 JSON) of `group`/`resource` (e.g. "", "nodes") matches every term.
  bool matches(const rapidjson::Value& object, std::string_view group,
               std::string_view resource) const;
  bool empty() const { return requirements_.empty(); }
  // Sufficient, sound test like LabelSelector::covers (`p!=x` is also implied by `p=y`, y != x).
  bool covers(const FieldSelector& narrower) const;
  // A canonical text form (terms sorted, duplicates dropped, values escaped), parseable again.
  std::string canonical() const;
  // The value required by an `=`/`==` term on `path`, if there is one (e.g. metadata.name).
  std::optional<std::string> required_value(std::string_view path) const;
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<FieldRequirement> requirements_;  // sorted
};

}  // namespace yurthub::kube
