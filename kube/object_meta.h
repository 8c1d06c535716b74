// object_meta(): namespace, name and resourceVersion of one Kubernetes object's JSON, read with a
// RapidJSON SAX pass that stops at the end of `metadata` (which the apiserver writes near the
// start), or as soon as all three were read (the apiserver writes them before labels,
// annotations and managedFields), so caching a 2 KB watch event does not cost a full DOM parse.
// Used by the response taps. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace yurthub::kube {

struct ObjectMeta {
  std::string namespace_name;  // "" for cluster-scoped objects
  std::string name;
  std::uint64_t resource_version = 0;  // 0 when absent or not a decimal number
};

// nullopt when the text is not a JSON object with a metadata object (or is malformed before the
// end of metadata, or before all three members were read). The name may be empty (a BOOKMARK's
// object has only a resourceVersion). A member repeated after all three were read is not seen
// (the apiserver never repeats one).
std::optional<ObjectMeta> object_meta(std::string_view json);

// object_meta() without its first-KiB shortcut: the whole text copied and parsed. The reference
// object_meta_fuzz checks object_meta() against (they must always agree).
std::optional<ObjectMeta> object_meta_of_whole_copy(std::string_view json);

// Parses a resourceVersion as the apiserver's etcd3 storage writes it (a decimal uint64); 0 for
// anything else, which then compares as oldest (as YurtHub does).
std::uint64_t parse_resource_version(std::string_view text);

}  // namespace yurthub::kube
