// The exclusion of hostNetwork pools by node affinity; see pod_affinity.h.
#include "admission/pod_affinity.h"

#include <string_view>

#include "base/json_member.h"
#include "base/json_parse.h"

namespace yurthub::admission {
namespace {

constexpr std::string_view kRequirement =
    R"({"key":"nodepool.openyurt.io/hostnetwork","operator":"NotIn","values":["true"]})";
constexpr std::string_view kAffinityPath = "/spec/affinity";
constexpr std::string_view kNodeAffinityPath = "/spec/affinity/nodeAffinity";
constexpr std::string_view kRequiredPath =
    "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";

// Collects "add" operations into a JSON Patch array.
class PatchWriter {
 public:
  void add(std::string_view path, std::string_view value_json) {
    out_ += out_.empty() ? "[" : ",";
    out_ += R"({"op":"add","path":")";
    out_ += path;
    out_ += R"(","value":)";
    out_ += value_json;
    out_ += "}";
  }
  std::string finish() { return out_.empty() ? out_ : out_ + "]"; }

 private:
  std::string out_;
};

std::string one_term() { return R"({"matchExpressions":[)" + std::string(kRequirement) + "]}"; }
std::string required() { return R"({"nodeSelectorTerms":[)" + one_term() + "]}"; }

bool absent(const rapidjson::Value* v) { return v == nullptr || v->IsNull(); }

bool non_empty_array(const rapidjson::Value* v) { return v && v->IsArray() && !v->Empty(); }

// Whether `expression` already keeps the pod off nodes labelled hostnetwork=true.
bool excludes_host_network(const rapidjson::Value& expression) {
  if (base::string_member(expression, "key") != kHostNetworkLabel ||
      base::string_member(expression, "operator") != "NotIn") {
    return false;
  }
  const rapidjson::Value* values = base::find_member(expression, "values");
  if (!values || !values->IsArray()) return false;
  for (const auto& value : values->GetArray()) {
    if (value.IsString() &&
        std::string_view(value.GetString(), value.GetStringLength()) == "true") {
      return true;
    }
  }
  return false;
}

// Adds the requirement to each term of `terms` (an array) that lacks it.
void add_to_terms(const rapidjson::Value& terms, const std::string& terms_path,
                  PatchWriter& patch) {
  for (rapidjson::SizeType i = 0; i < terms.Size(); ++i) {
    const rapidjson::Value& term = terms[i];
    const rapidjson::Value* expressions = base::find_member(term, "matchExpressions");
    if (!term.IsObject() || (!non_empty_array(expressions) &&
                             !non_empty_array(base::find_member(term, "matchFields")))) {
      continue;  // matches no node (see pod_affinity.h)
    }
    const std::string term_path = terms_path + "/" + std::to_string(i) + "/matchExpressions";
    if (!non_empty_array(expressions)) {
      patch.add(term_path, "[" + std::string(kRequirement) + "]");
      continue;
    }
    bool present = false;
    for (const auto& expression : expressions->GetArray()) {
      present = present || excludes_host_network(expression);
    }
    if (!present) patch.add(term_path + "/-", kRequirement);
  }
}

}  // namespace

std::string host_network_exclusion_patch(const rapidjson::Value& pod) {
  const rapidjson::Value* metadata = base::find_member(pod, "metadata");
  const rapidjson::Value* annotations =
      metadata ? base::find_member(*metadata, "annotations") : nullptr;
  if (!annotations || base::string_member(*annotations, kExcludeHostNetworkAnnotation) != "true") {
    return {};
  }
  const rapidjson::Value* spec = base::find_member(pod, "spec");
  if (!spec || !spec->IsObject()) return {};
  const rapidjson::Value* host_network = base::find_member(*spec, "hostNetwork");
  if (host_network && host_network->IsBool() && host_network->GetBool()) return {};

  PatchWriter patch;
  const rapidjson::Value* affinity = base::find_member(*spec, "affinity");
  if (absent(affinity)) {
    patch.add(kAffinityPath,
              R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)" + required() +
                  "}}");
    return patch.finish();
  }
  if (!affinity->IsObject()) return {};
  const rapidjson::Value* node_affinity = base::find_member(*affinity, "nodeAffinity");
  if (absent(node_affinity)) {
    patch.add(kNodeAffinityPath,
              R"({"requiredDuringSchedulingIgnoredDuringExecution":)" + required() + "}");
    return patch.finish();
  }
  if (!node_affinity->IsObject()) return {};
  const rapidjson::Value* selector =
      base::find_member(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
  if (absent(selector)) {
    patch.add(kRequiredPath, required());  // preferred terms, if any, stay as they are
    return patch.finish();
  }
  if (!selector->IsObject()) return {};
  const rapidjson::Value* terms = base::find_member(*selector, "nodeSelectorTerms");
  const std::string terms_path = std::string(kRequiredPath) + "/nodeSelectorTerms";
  if (absent(terms) || (terms->IsArray() && terms->Empty())) {
    patch.add(terms_path, "[" + one_term() + "]");
    return patch.finish();
  }
  if (!terms->IsArray()) return {};
  add_to_terms(*terms, terms_path, patch);
  return patch.finish();
}

}  // namespace yurthub::admission
