// Finding an object's cached copies; see cached_copies.h.
#include "cache/cached_copies.h"

#include "cache/local_proxy.h"

namespace yurthub::cache {

std::vector<CachedCopy> find_copies(ReadView& view, const ObjectRef& ref) {
  std::vector<CachedCopy> copies;
  for (auto& [key, record] : view.lists_with_prefix("")) {
    if (record.set_id == 0) continue;
    auto identity = ListIdentity::parse(key);
    if (!identity || identity->owner != ref.owner || identity->group != ref.group ||
        identity->version != ref.version || identity->resource != ref.resource ||
        (!identity->namespace_name.empty() && identity->namespace_name != ref.namespace_name)) {
      continue;
    }
    auto object = view.object(record.set_id, ref.namespace_name, ref.name);
    if (!object) continue;
    copies.push_back(CachedCopy{std::move(*identity), record, object->resource_version,
                                as_get_response(object->json, record)});
  }
  return copies;
}

const CachedCopy* newest_copy(const std::vector<CachedCopy>& copies, std::string_view component) {
  const CachedCopy* best = nullptr;
  for (const CachedCopy& c : copies) {
    if (!best || c.resource_version > best->resource_version ||
        (c.resource_version == best->resource_version && c.identity.component == component)) {
      best = &c;
    }
  }
  return best;
}

}  // namespace yurthub::cache
