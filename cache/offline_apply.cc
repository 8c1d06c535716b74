// Applying an offline patch or update to a cached object; see offline_apply.h. Called by
// OfflineWrites on the cache writer's thread.
#include "cache/offline_apply.h"

#include <rapidjson/document.h>

#include "base/json_parse.h"
#include "cache/update_rules.h"
#include "hub/hooks/cache_hooks.h"
#include "kube/json_patch.h"
#include "kube/merge_patch_diff.h"
#include "kube/strategic_merge.h"

namespace yurthub::cache {
namespace {

using rapidjson::Document;
using rapidjson::Value;

const Value* member(const Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string metadata_string(const Value& object, const char* name) {
  const Value* metadata = member(object, "metadata");
  const Value* value = metadata ? member(*metadata, name) : nullptr;
  return value && value->IsString() ? std::string(value->GetString(), value->GetStringLength())
                                    : "";
}

// Replaces (or with null `from`, removes) object[name] by a copy of `from`.
void set_copy(Document& object, const char* name, const Value* from) {
  object.RemoveMember(name);
  if (from == nullptr) return;
  Value key(name, object.GetAllocator());
  Value copy(*from, object.GetAllocator());
  object.AddMember(key, copy, object.GetAllocator());
}

WriteRefusal refusal(kube::Failure failure, const std::string& message, const char* reason) {
  return WriteRefusal{failure, message, reason};
}

std::string object_ref(const kube::RequestInfo& info) {
  return info.resource + (info.api_group.empty() ? "" : "." + info.api_group) + " \"" + info.name +
         "\"";
}

// The body of a patch of media type `type`, or of an update, parsed (depth-bounded).
std::variant<Document, WriteRefusal> parse_body(const std::string& type, std::string_view body) {
  Document parsed;
  if (Status s = base::parse_json(body, parsed); !s) {
    return WriteRefusal{
        kube::bad_request_error("the request body is not valid JSON: " + s.error().message),
        "bad_body"};
  }
  // kube-apiserver counts operations before applying any, and answers 413.
  if (type == "application/json-patch+json" && parsed.IsArray() &&
      parsed.Size() > kube::kMaxJsonPatchOperations) {
    // Worded as apiserver's errors.NewRequestEntityTooLargeError.
    kube::ApiError too_many{
        413, "RequestEntityTooLarge",
        "Request entity too large: " + kube::too_many_operations(parsed.Size())};
    return WriteRefusal{std::move(too_many), "too_large"};
  }
  return parsed;
}

// Applies the patch or takes the update; the preconditions on the result are checked later.
std::variant<Document, WriteRefusal> patched(const Document& base, const kube::RequestInfo& info,
                                             std::string_view content_type, std::string_view body) {
  Document doc;
  const std::string type = media_type(content_type);
  if (info.verb == kube::Verb::Update && type != "application/json") {
    return refusal(kube::Failure::UnsupportedMediaType,
                   "the node is offline and the hub cannot read an update sent as " + type +
                       "; send it as application/json",
                   "unsupported_media_type");
  }
  const bool known_patch = type == "application/json-patch+json" ||
                           type == "application/merge-patch+json" ||
                           type == "application/strategic-merge-patch+json";
  if (info.verb == kube::Verb::Patch && !known_patch) {
    return refusal(kube::Failure::UnsupportedMediaType,
                   "the node is offline and the hub applies only JSON, merge and strategic "
                   "merge patches, not " +
                       type,
                   "unsupported_media_type");
  }
  auto body_doc = parse_body(type, body);
  if (auto* refused = std::get_if<WriteRefusal>(&body_doc)) return std::move(*refused);
  Document& parsed = std::get<Document>(body_doc);
  if (info.verb == kube::Verb::Update) {
    if (!parsed.IsObject())
      return refusal(kube::Failure::BadRequest, "the body is not an object", "bad_body");
    return std::move(parsed);
  }
  doc.CopyFrom(base, doc.GetAllocator());
  Status applied;
  if (type == "application/json-patch+json") {
    if (!parsed.IsArray()) {
      return refusal(kube::Failure::BadRequest, "a JSON patch must be an array", "bad_body");
    }
    applied = kube::apply_json_patch(doc, parsed);
  } else if (type == "application/merge-patch+json") {
    applied = kube::apply_merge_patch(doc, parsed);
  } else {
    applied = kube::apply_strategic_merge_patch(doc, parsed);
  }
  if (!applied) return refusal(kube::Failure::Invalid, applied.error().message, "invalid");
  if (!doc.IsObject())
    return refusal(kube::Failure::Invalid, "the patched object is not a JSON object", "invalid");
  return doc;
}

// The apiserver's preconditions on the written object `doc`, in its words: the same UID, an
// update's resourceVersion the cached one, the same name and namespace, no immutable field changed.
std::optional<WriteRefusal> failed_precondition(const kube::RequestInfo& info, const Document& base,
                                                const Document& doc, std::uint64_t base_rv) {
  const std::string base_uid = metadata_string(base, "uid");
  const std::string uid = metadata_string(doc, "uid");
  if (!uid.empty() && uid != base_uid) {
    return refusal(
        kube::Failure::Conflict,
        "Precondition failed: UID in precondition: " + uid + ", UID in object meta: " + base_uid,
        "conflict");
  }
  const std::string rv = metadata_string(doc, "resourceVersion");
  if (info.verb == kube::Verb::Update && !rv.empty() && rv != std::to_string(base_rv)) {
    return refusal(kube::Failure::Conflict,
                   "Operation cannot be fulfilled on " + object_ref(info) +
                       ": the object has been modified; please apply your changes to the latest "
                       "version and try again",
                   "conflict");
  }
  const std::string name = metadata_string(doc, "name");
  if (name != info.name ||
      metadata_string(doc, "namespace") != metadata_string(base, "namespace")) {
    return refusal(kube::Failure::Invalid,
                   "the name of the object (" + name + ") does not match the name on the URL (" +
                       info.name + ")",
                   "invalid");
  }
  if (auto change = immutable_field_change(info, base, doc)) {
    return refusal(kube::Failure::Invalid, *change, "invalid");
  }
  return std::nullopt;
}

// Makes `doc` what the apiserver would store: the status subresource split, as its registry
// strategies do; kind and apiVersion kept; the cached resourceVersion.
void as_stored(const kube::RequestInfo& info, const Document& base, Document& doc,
               std::uint64_t base_rv) {
  if (info.subresource == "status") {
    Document out;
    out.CopyFrom(base, out.GetAllocator());
    set_copy(out, "status", member(doc, "status"));
    doc.Swap(out);
  } else if (member(base, "status") != nullptr) {
    set_copy(doc, "status", member(base, "status"));
  }
  for (const char* type_member : {"kind", "apiVersion"}) {
    if (member(doc, type_member) == nullptr) set_copy(doc, type_member, member(base, type_member));
  }
  Value& metadata = doc["metadata"];
  Value rv_value(std::to_string(base_rv).c_str(), doc.GetAllocator());
  if (metadata.HasMember("resourceVersion"))
    metadata["resourceVersion"] = rv_value;
  else
    metadata.AddMember("resourceVersion", rv_value, doc.GetAllocator());
}

}  // namespace

std::string media_type(std::string_view content_type) {
  std::string type(content_type.substr(0, content_type.find(';')));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

std::variant<std::string, WriteRefusal> apply_offline_write(
    std::string_view base_json, std::uint64_t base_rv, const kube::RequestInfo& info,
    std::string_view content_type, std::string_view body, const AdmitWrite& admit) {
  Document base;
  // Without metadata there is no resourceVersion to keep (and a /status write's result is this
  // object): an apiserver object always has it.
  const Value* base_metadata = nullptr;
  if (base::parse_json(base_json, base)) base_metadata = member(base, "metadata");
  if (base_metadata == nullptr || !base_metadata->IsObject()) {
    return refusal(kube::Failure::Offline, "the cached " + object_ref(info) + " cannot be read",
                   "not_cached");
  }
  auto result = patched(base, info, content_type, body);
  if (auto* refused = std::get_if<WriteRefusal>(&result)) return std::move(*refused);
  Document& doc = std::get<Document>(result);
  keep_system_metadata(base, doc);
  if (admit) {
    if (auto refused = admit(base, doc)) return WriteRefusal{std::move(*refused), "forbidden"};
  }
  if (auto refused = failed_precondition(info, base, doc, base_rv)) return std::move(*refused);
  as_stored(info, base, doc, base_rv);
  std::string json = base::to_json(doc);
  if (json.size() > hub::kMaxOfflineWriteBytes) {
    return refusal(kube::Failure::BodyTooLarge,
                   "the " + std::string(kube::verb_name(info.verb)) + " makes " + object_ref(info) +
                       " " + std::to_string(json.size()) + " bytes long, over the limit of " +
                       std::to_string(hub::kMaxOfflineWriteBytes),
                   "too_large");
  }
  return json;
}

std::string carry_change(std::string_view base_json, std::string_view updated_json,
                         std::string_view copy_json) {
  if (copy_json == base_json) return std::string(updated_json);
  Document base, updated, copy;
  if (!base::parse_json(base_json, base) || !base::parse_json(updated_json, updated) ||
      !base::parse_json(copy_json, copy)) {
    return std::string(copy_json);
  }
  Document diff = kube::create_merge_patch(base, updated);
  if (!kube::apply_merge_patch(copy, diff) || !copy.IsObject()) return std::string(copy_json);
  return base::to_json(copy);
}

}  // namespace yurthub::cache
