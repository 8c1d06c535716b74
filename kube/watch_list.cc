// Streaming lists' rules and pieces; see watch_list.h.
#include "kube/watch_list.h"

#include <vector>

#include <rapidjson/document.h>

#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

constexpr std::string_view kNotOlderThan = "NotOlderThan";
constexpr std::string_view kExact = "Exact";

StatusCause forbidden(std::string field, std::string_view why) {
  return {"FieldValueForbidden", "Forbidden: " + std::string(why), std::move(field)};
}

StatusCause not_supported(std::string field, std::string_view value, std::string_view allowed) {
  return {"FieldValueNotSupported",
          "Unsupported value: \"" + std::string(value) +
              "\": supported values: " + std::string(allowed),
          std::move(field)};
}

// validation.go's validateWatchOptions (WatchList enabled).
void watch_causes(const RequestInfo& info, std::vector<StatusCause>& causes) {
  const std::string& match = info.resource_version_match;
  if (info.send_initial_events && match != kNotOlderThan) {
    causes.push_back(forbidden("resourceVersionMatch",
                               "sendInitialEvents requires setting resourceVersionMatch to "
                               "NotOlderThan"));
  }
  if (match.empty()) return;
  if (!info.send_initial_events) {
    causes.push_back(forbidden("resourceVersionMatch",
                               "resourceVersionMatch is forbidden for watch unless "
                               "sendInitialEvents is provided"));
  }
  if (match != kNotOlderThan)
    causes.push_back(not_supported("resourceVersionMatch", match, "\"NotOlderThan\""));
  if (!info.continue_token.empty()) {
    causes.push_back(forbidden("resourceVersionMatch",
                               "resourceVersionMatch is forbidden when continue is provided"));
  }
}

// validation.go's ValidateListOptions for a list.
void list_causes(const RequestInfo& info, std::vector<StatusCause>& causes) {
  const std::string& match = info.resource_version_match;
  if (!match.empty()) {
    if (info.resource_version.empty()) {
      causes.push_back(forbidden("resourceVersionMatch",
                                 "resourceVersionMatch is forbidden unless resourceVersion is "
                                 "provided"));
    }
    if (!info.continue_token.empty()) {
      causes.push_back(forbidden("resourceVersionMatch",
                                 "resourceVersionMatch is forbidden when continue is provided"));
    }
    if (match != kExact && match != kNotOlderThan) {
      causes.push_back(
          not_supported("resourceVersionMatch", match, "\"Exact\", \"NotOlderThan\", \"\""));
    }
    if (match == kExact && info.resource_version == "0") {
      causes.push_back(forbidden("resourceVersionMatch",
                                 "resourceVersionMatch \"exact\" is forbidden for resourceVersion "
                                 "\"0\""));
    }
  }
  if (info.send_initial_events)
    causes.push_back(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
}

}  // namespace

std::optional<ApiError> invalid_list_options(const RequestInfo& info) {
  std::vector<StatusCause> causes;
  if (info.verb == Verb::Watch)
    watch_causes(info, causes);
  else if (info.verb == Verb::List)
    list_causes(info, causes);
  if (causes.empty()) return std::nullopt;
  return invalid_error("meta.k8s.io", "ListOptions", "", std::move(causes));
}

bool marks_initial_events_end(std::string_view object_json) {
  // Every BOOKMARK passes here, once a minute per watch; only the one that ends the initial
  // events names the annotation, so the text test spares parsing the others.
  if (object_json.find(kInitialEventsEndAnnotation) == std::string_view::npos) return false;
  rapidjson::Document doc;
  if (!base::parse_json(object_json, doc) || !doc.IsObject()) return false;
  const auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return false;
  const auto annotations = meta->value.FindMember("annotations");
  if (annotations == meta->value.MemberEnd() || !annotations->value.IsObject()) return false;
  const auto mark = annotations->value.FindMember(
      rapidjson::StringRef(kInitialEventsEndAnnotation.data(), kInitialEventsEndAnnotation.size()));
  return mark != annotations->value.MemberEnd() && mark->value.IsString() &&
         std::string_view(mark->value.GetString(), mark->value.GetStringLength()) == "true";
}

std::string initial_events_end_bookmark(std::string_view kind, std::string_view api_version,
                                        std::uint64_t resource_version) {
  std::string line = R"({"type":"BOOKMARK","object":{"kind":")";
  line.append(kind).append(R"(","apiVersion":")").append(api_version);
  line.append(R"(","metadata":{"resourceVersion":")").append(std::to_string(resource_version));
  line.append(R"(","annotations":{")").append(kInitialEventsEndAnnotation);
  line.append(R"(":"true"}}}})");
  line += '\n';
  return line;
}

}  // namespace yurthub::kube
