// Fuzz target for cache/offline_apply.h apply_offline_write(), which applies a client's patch or
// update to the cached object while the node is offline, and carry_change(), which copies the
// change to the other cached copies. The input's first byte picks the write (method, target,
// content type); the rest, split at NUL, is the cached object and the body. Oracles: a write
// that is applied yields a JSON object of at most 3 MiB with the cached resourceVersion; one
// that is refused carries a message.
#include "cache/offline_apply.h"

#include <iterator>

#include "base/json_parse.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

struct Write {
  const char* method;
  const char* target;
  const char* content_type;
};

constexpr Write kWrites[] = {
    {"PATCH", "/api/v1/namespaces/default/pods/web-0/status",
     "application/strategic-merge-patch+json"},
    {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json"},
    {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json"},
    {"PATCH", "/api/v1/nodes/edge-1/status",
     "application/strategic-merge-patch+json; charset=utf-8"},
    {"PATCH", "/api/v1/nodes/edge-1", "application/apply-patch+yaml"},
    {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/json"},
    {"PUT", "/api/v1/nodes/edge-1/status", "application/json"},
    {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/vnd.kubernetes.protobuf"},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Write& w = kWrites[data[0] % std::size(kWrites)];
  const auto parts = fuzz::split_parts(fuzz::as_text(data + 1, size - 1), 2);
  const kube::RequestInfo info = kube::classify_request(w.method, w.target, "kubelet/v1.32.4");
  auto result = cache::apply_offline_write(parts[0], 40, info, w.content_type, parts[1]);
  if (auto* refused = std::get_if<cache::WriteRefusal>(&result)) {
    fuzz::check(!refused->error.message.empty() && refused->reason != nullptr,
                "a refusal without words");
    return 0;
  }
  const std::string& json = std::get<std::string>(result);
  fuzz::check(json.size() <= (3u << 20), "a written object over 3 MiB");
  rapidjson::Document doc;
  fuzz::check(base::parse_json(json, doc) && doc.IsObject(), "a written object is not an object");
  const auto meta = doc.FindMember("metadata");
  fuzz::check(meta != doc.MemberEnd() && meta->value.IsObject(),
              "a written object without metadata");
  const auto rv = meta->value.FindMember("resourceVersion");
  fuzz::check(rv != meta->value.MemberEnd() && rv->value == "40", "the resourceVersion moved");
  (void)cache::carry_change(parts[0], json, parts[0]);
  return 0;
}
