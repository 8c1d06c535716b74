// Reads, create and delete; see api_handlers.h.
#include "test/fake_apiserver/api_handlers.h"

#include <charconv>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/fake_apiserver/csr_validation.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  out += s;
  out += '"';
}

std::string list_metadata(const ListResult& r, bool sorted_keys) {
  std::string md = "{";
  std::string rv = "\"resourceVersion\":\"" + std::to_string(r.rv) + "\"";
  std::string cont;
  if (!r.continue_token.empty() || sorted_keys) {
    cont = "\"continue\":\"" + r.continue_token + "\"";
  }
  std::string remaining;
  if (r.remaining) remaining = "\"remainingItemCount\":" + std::to_string(*r.remaining);
  if (sorted_keys) {  // unstructured: continue, remainingItemCount, resourceVersion
    md += cont;
    if (!remaining.empty()) md += "," + remaining;
    md += "," + rv;
  } else {
    md += rv;
    if (!cont.empty()) md += "," + cont;
    if (!remaining.empty()) md += "," + remaining;
  }
  md += "}";
  return md;
}

void append_items(std::string& out, const ResourceInfo& r, std::string_view version,
                  const ListResult& result) {
  std::string api_version = r.api_version(version);
  out += "\"items\":[";
  bool first = true;
  for (const auto& item : result.items) {
    if (!first) out += ',';
    first = false;
    if (r.crd) {
      out += with_type_meta(r.kind, api_version, *item);
    } else {
      out += *item;
    }
  }
  out += ']';
}

}  // namespace

std::string list_body(const ResourceInfo& r, std::string_view version, const ListResult& result) {
  std::size_t size = 256;
  for (const auto& item : result.items) size += item->size() + 64;
  std::string out;
  out.reserve(size);
  std::string list_kind = std::string(r.kind) + "List";
  std::string api_version = r.api_version(version);
  if (r.crd) {
    out += "{\"apiVersion\":";
    append_quoted(out, api_version);
    out += ',';
    append_items(out, r, version, result);
    out += ",\"kind\":";
    append_quoted(out, list_kind);
    out += ",\"metadata\":" + list_metadata(result, true) + "}";
    return out;
  }
  out += "{\"kind\":";
  append_quoted(out, list_kind);
  out += ",\"apiVersion\":";
  append_quoted(out, api_version);
  out += ",\"metadata\":" + list_metadata(result, false) + ",";
  append_items(out, r, version, result);
  out += '}';
  return out;
}

std::optional<Reply> parse_selectors(const ApiRequest& req, LabelSelector& labels,
                                     FieldSelector& fields) {
  auto l = LabelSelector::parse(req.query.value("labelSelector"));
  if (!l) return bad_request(l.error().message);
  auto f = FieldSelector::parse(req.query.value("fieldSelector"));
  if (!f) return bad_request(f.error().message);
  if (Status converted = f->convert(*req.resource); !converted) {
    return bad_request(converted.error().message);
  }
  labels = std::move(*l);
  fields = std::move(*f);
  return std::nullopt;
}

Reply ApiHandlers::full_object(const ApiRequest& req, unsigned code,
                               const std::string& bare) const {
  const ResourceInfo& r = *req.resource;
  return Reply{code, "application/json",
               with_type_meta(r.kind, r.api_version(req.path.version), bare)};
}

Reply ApiHandlers::missing(const ApiRequest& req) const {
  const ResourceInfo& r = *req.resource;
  return not_found(r.qualified(), r.group, r.name, req.path.name);
}

Reply ApiHandlers::get(const ApiRequest& req) {
  const StoredObject* obj = store_.get(req.resource->key(), req.path.ns, req.path.name);
  if (obj == nullptr) return missing(req);
  return full_object(req, 200, *obj->json);
}

Reply ApiHandlers::list(const ApiRequest& req) {
  LabelSelector labels;
  FieldSelector fields;
  if (auto refused = parse_selectors(req, labels, fields)) return *refused;
  ListOptions lo;
  lo.resource = req.resource->key();
  lo.ns = req.path.ns;
  lo.namespaced = req.resource->namespaced;
  lo.labels = &labels;
  lo.fields = &fields;
  std::string limit = req.query.value("limit");
  // resourceVersion=0 is served from the watch cache, which ignores limit (pods-list-node).
  if (!limit.empty() && req.query.value("resourceVersion") != "0") {
    auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), lo.limit);
    if (ec != std::errc() || end != limit.data() + limit.size()) {
      return bad_request("invalid limit: " + limit);
    }
  }
  std::string cont = req.query.value("continue");
  if (!cont.empty()) {
    auto token = decode_continue(cont);
    if (!token) return bad_request(token.error().message);
    lo.cont = *token;
  }
  ListResult result = store_.list(lo);
  return Reply{200, "application/json", list_body(*req.resource, req.path.version, result)};
}

Reply ApiHandlers::create(const ApiRequest& req) {
  auto doc = parse_json(req.body);
  if (!doc || !doc->IsObject()) {
    return bad_request(
        "the body of the request was in an unknown format - accepted media types "
        "include: application/json, application/yaml");
  }
  std::string body_ns = meta_string(*doc, "namespace");
  if (req.resource->namespaced && !body_ns.empty() && body_ns != req.path.ns) {
    return bad_request(
        "the namespace of the provided object does not match the namespace sent "
        "on the request");
  }
  if (req.resource->key() == kCsrResourceKey) return create_csr(req, std::move(*doc));
  return create_object(*req.resource, req.path.version, req.path.ns, std::move(*doc), false);
}

Reply ApiHandlers::create_object(const ResourceInfo& r, std::string_view version,
                                 const std::string& ns, rapidjson::Document doc, bool keep_meta) {
  strip_type_meta(doc);
  ensure_metadata(doc);
  std::string name = meta_string(doc, "name");
  if (name.empty()) {
    std::string prefix = meta_string(doc, "generateName");
    if (prefix.empty()) {
      return invalid(r.kind, "", "metadata.name: Required value: name or generateName is required");
    }
    name = prefix + random_suffix(5);
    set_meta_string(doc, "name", name);
  }
  if (r.namespaced) {
    set_meta_string(doc, "namespace", ns);
  } else {
    remove_meta(doc, "namespace");
  }
  std::string store_ns = r.namespaced ? ns : "";
  if (store_.get(r.key(), store_ns, name) != nullptr) {
    return already_exists(r.qualified(), r.group, r.name, name);
  }
  if (!keep_meta || meta_string(doc, "uid").empty()) set_meta_string(doc, "uid", random_uuid());
  if (!keep_meta || meta_string(doc, "creationTimestamp").empty()) {
    set_meta_string(doc, "creationTimestamp", now_rfc3339());
  }
  remove_meta(doc, "deletionTimestamp");
  if (r.key() == "/secrets") merge_string_data(doc);
  StoredObject obj = store_.put(r.key(), store_ns, name, doc);
  return Reply{201, "application/json", with_type_meta(r.kind, r.api_version(version), *obj.json)};
}

Reply ApiHandlers::remove(const ApiRequest& req) {
  const StoredObject* obj = store_.get(req.resource->key(), req.path.ns, req.path.name);
  if (obj == nullptr) return missing(req);
  // DeleteOptions.preconditions, as `kubectl delete` and controllers send them.
  auto opts = parse_json(req.body);
  if (opts && opts->IsObject() && opts->HasMember("preconditions") &&
      (*opts)["preconditions"].IsObject()) {
    const auto& pre = (*opts)["preconditions"];
    auto stored = parse_json(*obj->json);
    auto check = [&](const char* field) {
      return !pre.HasMember(field) || !pre[field].IsString() || !stored ||
             pre[field].GetString() == meta_string(*stored, field);
    };
    if (!check("resourceVersion") || !check("uid")) {
      const ResourceInfo& r = *req.resource;
      return conflict_message(r.qualified(), r.group, r.name, req.path.name,
                              "the object has been modified; please apply your changes to the "
                              "latest version and try again");
    }
  }
  auto removed = store_.remove(req.resource->key(), req.path.ns, req.path.name);
  return full_object(req, 200, *removed->json);
}

Reply ApiHandlers::remove_collection(const ApiRequest& req) {
  LabelSelector labels;
  FieldSelector fields;
  if (auto refused = parse_selectors(req, labels, fields)) return *refused;
  ListOptions lo;
  lo.resource = req.resource->key();
  lo.ns = req.path.ns;
  lo.namespaced = req.resource->namespaced;
  lo.labels = &labels;
  lo.fields = &fields;
  ListResult doomed = store_.list(lo);
  ListResult removed;
  for (const auto& json : doomed.items) {
    auto doc = parse_json(*json);
    if (!doc) continue;
    auto gone =
        store_.remove(lo.resource, meta_string(*doc, "namespace"), meta_string(*doc, "name"));
    if (gone) removed.items.push_back(gone->json);
  }
  removed.rv = store_.current_rv();
  return Reply{200, "application/json", list_body(*req.resource, req.path.version, removed)};
}

Reply ApiHandlers::self_subject_review(const ApiRequest& req) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("SelfSubjectReview");
  w.Key("apiVersion");
  w.String("authentication.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("creationTimestamp");
  w.Null();
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("userInfo");
  w.StartObject();
  w.Key("username");
  w.String(req.user.user);
  if (!req.user.uid.empty()) {
    w.Key("uid");
    w.String(req.user.uid);
  }
  w.Key("groups");
  w.StartArray();
  for (const auto& g : req.user.groups) w.String(g);
  w.String("system:authenticated");
  w.EndArray();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return Reply{201, "application/json", std::string(buf.GetString(), buf.GetSize())};
}

Reply ApiHandlers::self_subject_access_review(const ApiRequest& req, bool allowed) {
  auto doc = parse_json(req.body);
  if (!doc || !doc->IsObject() || !doc->HasMember("spec") || !(*doc)["spec"].IsObject()) {
    return status_reply(400, "BadRequest", "SelfSubjectAccessReview without a spec");
  }
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("SelfSubjectAccessReview");
  w.Key("apiVersion");
  w.String("authorization.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("creationTimestamp");
  w.Null();
  w.EndObject();
  w.Key("spec");
  (*doc)["spec"].Accept(w);
  w.Key("status");
  w.StartObject();
  w.Key("allowed");
  w.Bool(allowed);
  if (allowed) {
    w.Key("reason");
    w.String("fake authorizer: allowed");
  }
  w.EndObject();
  w.EndObject();
  return Reply{201, "application/json", std::string(buf.GetString(), buf.GetSize())};
}

Reply ApiHandlers::pod_log(const ApiRequest& req) {
  if (store_.get(req.resource->key(), req.path.ns, req.path.name) == nullptr) return missing(req);
  return Reply{200, "text/plain", "fake log line\n"};
}

}  // namespace yurthub::fake
