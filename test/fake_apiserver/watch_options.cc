// Streaming-list watch options; see watch_options.h.
#include "test/fake_apiserver/watch_options.h"

#include <string>
#include <vector>

namespace yurthub::fake {
namespace {

FieldCause forbidden(const std::string& field, const std::string& why) {
  return {"FieldValueForbidden", "Forbidden: " + why, field};
}

}  // namespace

std::variant<WatchOptions, Reply> decide_watch_options(const Query& query, bool watch_list) {
  const std::string match = query.value("resourceVersionMatch");
  const std::string rv = query.value("resourceVersion");
  std::vector<FieldCause> causes;
  WatchOptions options;
  if (!watch_list) {
    // apimachinery v0.26 ValidateListOptions: sendInitialEvents does not exist (ignored).
    if (!match.empty()) {
      causes.push_back(
          forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch"));
      if (rv.empty()) {
        causes.push_back(forbidden("resourceVersionMatch",
                                   "resourceVersionMatch is forbidden unless resourceVersion is "
                                   "provided"));
      }
    }
  } else {
    if (auto sent = query.get("sendInitialEvents")) {
      options.send_initial_events = query.flag("sendInitialEvents");
      if (match != "NotOlderThan") {
        causes.push_back(forbidden("resourceVersionMatch",
                                   "sendInitialEvents requires setting resourceVersionMatch to "
                                   "NotOlderThan"));
      }
    } else if (match.empty() && (rv.empty() || rv == "0")) {
      options.send_initial_events = true;  // defaults.go: a watch from now lists first
    }
    if (!match.empty()) {
      if (!query.get("sendInitialEvents")) {
        causes.push_back(forbidden("resourceVersionMatch",
                                   "resourceVersionMatch is forbidden for watch unless "
                                   "sendInitialEvents is provided"));
      }
      if (match != "NotOlderThan") {
        causes.push_back(
            {"FieldValueNotSupported",
             "Unsupported value: \"" + match + "\": supported values: \"NotOlderThan\"",
             "resourceVersionMatch"});
      }
    }
  }
  if (!causes.empty()) return invalid_fields("ListOptions", "meta.k8s.io", "", causes);
  return options;
}

}  // namespace yurthub::fake
