// What an offline patch or update does to the cached object, as the apiserver would do it: the
// patch types it applies, the status-subresource split, and the preconditions it checks (uid,
// resourceVersion, name). Pure (no store, no I/O) so that every rule is unit-tested from data.
// Called by OfflineWrites inside its CacheWriter task.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <rapidjson/document.h>

#include "kube/request_info.h"
#include "kube/status.h"

namespace yurthub::cache {

// Why a write is answered with an error instead of being applied and journaled.
struct WriteRefusal {
  WriteRefusal(kube::Failure failure, const std::string& message, const char* label)
      : error(kube::api_error(failure, message)), reason(label) {}
  WriteRefusal(kube::ApiError refusal, const char* label)
      : error(std::move(refusal)), reason(label) {}

  kube::ApiError error;  // the Status the client gets
  const char* reason;    // the `reason` label of node_yurthub_journal_refused_total
};

// Admission of a patched object, before the apiserver's registry strategy narrows it (a /status
// write keeps only status): `before` is the cached object, `patched` the write's result.
using AdmitWrite = std::function<std::optional<kube::ApiError>(const rapidjson::Value& before,
                                                               const rapidjson::Value& patched)>;

// Applies the client's write to `base` (the newest cached copy: a JSON object with kind and
// apiVersion, at resourceVersion `base_rv`). `info.verb` is Patch (content_type names the patch
// type) or "update" (body is the whole object, JSON). Returns the new object: its resourceVersion
// stays `base_rv` (only the apiserver assigns new ones); a /status write changes only `status`, a
// write to the object itself keeps the cached `status`.
// With `admit`, the patched object is admitted first, as the apiserver's admission does.
std::variant<std::string, WriteRefusal> apply_offline_write(
    std::string_view base, std::uint64_t base_rv, const kube::RequestInfo& info,
    std::string_view content_type, std::string_view body, const AdmitWrite& admit = {});

// Another cached copy of the same object (another component's, possibly filtered): the change
// from `base` to `updated` (a merge patch) applied to it. Returns `copy` unchanged if it cannot
// be read.
std::string carry_change(std::string_view base, std::string_view updated, std::string_view copy);

// The media type of a Content-Type header, without parameters, lowercased.
std::string media_type(std::string_view content_type);

}  // namespace yurthub::cache
