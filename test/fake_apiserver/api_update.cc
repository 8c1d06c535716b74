// Update (PUT) and patch (PATCH); see api_handlers.h. Both end in commit_update(), which applies
// the apiserver's update rules: resourceVersion and uid preconditions (409 Conflict), the status
// subresource split (a main-resource write keeps the stored status, a /status write changes only
// status), immutable identity fields, and no-op detection (an update that changes nothing is not
// written and bumps no resourceVersion, as with etcd3's GuaranteedUpdate). The patches themselves
// are this folder's own (json_patch.h, strategic_patch.h), not the hub's.
#include "test/fake_apiserver/api_handlers.h"

#include "test/fake_apiserver/csr_protobuf.h"
#include "test/fake_apiserver/csr_validation.h"
#include "test/fake_apiserver/json_patch.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/strategic_patch.h"

namespace yurthub::fake {
Reply ApiHandlers::update(const ApiRequest& req) {
  if (req.content_type == "application/vnd.kubernetes.protobuf") {
    // Only `kubectl certificate approve` writes protobuf to the fake (csr_protobuf.h).
    if (req.resource->key() != kCsrResourceKey || req.path.subresource != "approval") {
      return unsupported_media_type(req.content_type);
    }
    auto doc = decode_csr_protobuf(req.body);
    if (!doc) return bad_request(doc.error().message);
    const StoredObject* stored = store_.get(req.resource->key(), "", req.path.name);
    if (stored == nullptr) return missing(req);
    return commit_update(req, *stored, std::move(*doc));
  }
  auto doc = parse_json(req.body);
  if (!doc || !doc->IsObject()) {
    return bad_request(
        "the body of the request was in an unknown format - accepted media types "
        "include: application/json, application/yaml");
  }
  const StoredObject* stored = store_.get(req.resource->key(), req.path.ns, req.path.name);
  if (stored == nullptr) return missing(req);
  strip_type_meta(*doc);
  return commit_update(req, *stored, std::move(*doc));
}

Reply ApiHandlers::patch(const ApiRequest& req) {
  const std::string& type = req.content_type;  // already a bare media type (router.cc)
  bool json_patch = type == "application/json-patch+json";
  bool merge = type == "application/merge-patch+json";
  bool strategic = type == "application/strategic-merge-patch+json";
  const ResourceInfo& r = *req.resource;
  // Custom resources have no Go types to take patch strategies from: the apiserver refuses
  // strategic merge patches for them.
  if ((!json_patch && !merge && !strategic) || (strategic && r.crd)) {
    return unsupported_media_type(type);
  }
  auto patch = parse_json(req.body);
  if (!patch) return bad_request("error decoding patch: " + patch.error().message);
  const StoredObject* stored = store_.get(r.key(), req.path.ns, req.path.name);
  if (stored == nullptr) return missing(req);
  auto target = parse_json(with_type_meta(r.kind, r.api_version(req.path.version), *stored->json));
  if (!target) return internal_error("stored object is not JSON: " + target.error().message);
  if (merge) {
    apply_merge_patch(*target, *patch);
  } else if (auto error = json_patch ? apply_json_patch(*target, *patch)
                                     : apply_strategic_merge_patch(*target, *patch, r.kind)) {
    return patch_failed(*error);
  }
  // A merge patch that is not an object replaces the object with something no type decodes.
  if (!target->IsObject()) {
    return invalid("", "",
                   "patch: Invalid value: \"" + to_json(*target) +
                       "\": the patched object is not a JSON object");
  }
  strip_type_meta(*target);
  return commit_update(req, *stored, std::move(*target));
}

Reply ApiHandlers::commit_update(const ApiRequest& req, const StoredObject& stored,
                                 rapidjson::Document incoming) {
  const ResourceInfo& r = *req.resource;
  std::string name = meta_string(incoming, "name");
  if (!name.empty() && name != req.path.name) {
    return bad_request("the name of the object (" + name +
                       ") does not match the name on the URL (" + req.path.name + ")");
  }
  auto current = parse_json(*stored.json);
  if (!current || !current->IsObject()) return internal_error("stored object is not JSON");
  std::string want_rv = meta_string(incoming, "resourceVersion");
  if (!want_rv.empty() && want_rv != std::to_string(stored.rv)) {
    return conflict(r.qualified(), r.group, r.name, req.path.name);
  }
  std::string want_uid = meta_string(incoming, "uid");
  std::string have_uid = meta_string(*current, "uid");
  if (!want_uid.empty() && want_uid != have_uid) {
    return conflict_message(r.qualified(), r.group, r.name, req.path.name,
                            "Precondition failed: UID in precondition: " + want_uid +
                                ", UID in object meta: " + have_uid);
  }
  if (req.path.subresource == "approval")
    return commit_csr_approval(req, stored, *current, incoming);
  rapidjson::Document next;
  if (req.path.subresource == "status") {
    next.CopyFrom(*current, next.GetAllocator());
    copy_member(next, incoming, "status");
  } else {
    next.Swap(incoming);
    ensure_metadata(next);
    if (r.has_status) copy_member(next, *current, "status");
    // A CSR's spec is immutable: an update keeps the stored one (csrStrategy.PrepareForUpdate).
    if (r.key() == kCsrResourceKey) copy_member(next, *current, "spec");
    if (r.key() == "/secrets") merge_string_data(next);
  }
  // Identity fields are immutable; an update that omits them keeps them.
  for (const char* field : {"name", "namespace", "uid", "creationTimestamp"}) {
    std::string v = meta_string(*current, field);
    if (v.empty()) {
      remove_meta(next, field);
    } else {
      set_meta_string(next, field, v);
    }
  }
  set_meta_string(next, "resourceVersion", std::to_string(stored.rv));
  if (to_json(next) == *stored.json) return full_object(req, 200, *stored.json);
  StoredObject obj = store_.put(r.key(), req.path.ns, req.path.name, next);
  return full_object(req, 200, *obj.json);
}

}  // namespace yurthub::fake
