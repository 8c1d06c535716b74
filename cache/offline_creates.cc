// Offline creates: events, nodes, CSINodes, leases and TokenRequests; see offline_creates.h.
#include "cache/offline_creates.h"

#include <chrono>
#include <random>

#include <rapidjson/document.h>

#include "base/clock.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "cache/cached_copies.h"
#include "cache/local_proxy.h"
#include "cache/offline_apply.h"
#include "cache/writer_task.h"
#include "kube/protobuf_json.h"
#include "kube/protobuf_wire.h"
#include "net/tls.h"

namespace yurthub::cache {
namespace {

namespace asio = boost::asio;
using rapidjson::Document;
using rapidjson::Value;

bool is_event(const kube::RequestInfo& info) {
  return (info.api_group.empty() || info.api_group == "events.k8s.io") && info.resource == "events";
}

bool is_protobuf(std::string_view content_type) {
  return media_type(content_type) == kube::kProtobufMediaType;
}

std::string random_suffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as k8s' utilrand.String
  thread_local std::mt19937 rng{std::random_device{}()};
  std::string out;
  for (int i = 0; i < 5; ++i) out += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return out;
}

// A uid for an object the hub creates itself (a lease while offline): random, in the UUID form.
std::string random_uid() {
  auto hex = net::random_token();
  std::string h = hex ? *hex : std::string(32, '0');
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

// What the node keeps locally when kubelet creates it offline and the cache has none: its lease
// and its CSINode (kube/protobuf_json.h reads their protobuf bodies).
using LocalKind = OfflineCreates::LocalKind;

std::optional<LocalKind> local_kind(const kube::RequestInfo& info) {
  if (!info.subresource.empty()) return std::nullopt;
  if (info.api_group == "coordination.k8s.io" && info.resource == "leases")
    return LocalKind{"Lease", "coordination.k8s.io/v1", "LeaseList"};
  if (info.api_group == "storage.k8s.io" && info.resource == "csinodes")
    return LocalKind{"CSINode", "storage.k8s.io/v1", "CSINodeList"};
  return std::nullopt;
}

// The object kubelet creates, as the cache keeps it: the client's object (JSON, or the protobuf
// body rendered as JSON) with what the apiserver would add. nullopt when the body is unreadable.
std::optional<std::string> local_object(const kube::RequestInfo& info, const LocalKind& kind,
                                        const hub::OfflineWrite& write) {
  Document doc;
  if (is_protobuf(write.content_type)) {
    auto json = kube::protobuf_object_json(write.body, kind.kind, kind.api_version);
    if (!json || !base::parse_json(*json, doc)) return std::nullopt;
  } else if (!base::parse_json(write.body, doc)) {
    return std::nullopt;
  }
  if (!doc.IsObject() || !doc.HasMember("metadata") || !doc["metadata"].IsObject())
    return std::nullopt;
  auto& a = doc.GetAllocator();
  Value& metadata = doc["metadata"];
  for (const char* set : {"namespace", "uid", "resourceVersion", "creationTimestamp"})
    metadata.RemoveMember(set);
  if (!info.namespace_name.empty())
    metadata.AddMember("namespace", Value(info.namespace_name.c_str(), a), a);
  metadata.AddMember("uid", Value(random_uid().c_str(), a), a);
  // Only the apiserver assigns resourceVersions; "1" is below any it will: the cloud's object
  // replaces this one as soon as kubelet reads it online.
  metadata.AddMember("resourceVersion", "1", a);
  metadata.AddMember("creationTimestamp",
                     Value(kube::format_time(base::WallClock::unix_seconds(), 0, false).c_str(), a),
                     a);
  doc.RemoveMember("kind");
  doc.RemoveMember("apiVersion");
  Document out;
  out.SetObject();
  auto& oa = out.GetAllocator();
  out.AddMember(
      "kind", Value(kind.kind.data(), static_cast<rapidjson::SizeType>(kind.kind.size()), oa), oa);
  out.AddMember(
      "apiVersion",
      Value(kind.api_version.data(), static_cast<rapidjson::SizeType>(kind.api_version.size()), oa),
      oa);
  for (auto& m : doc.GetObject()) out.AddMember(Value(m.name, oa), Value(m.value, oa), oa);
  return base::to_json(out);
}

// A JSON event as the apiserver would create it, and its name.
struct NamedEvent {
  std::string name;
  std::string json;
};

// Names an event that has no name as the apiserver would: generateName (else "event.") plus five
// random characters. nullopt: `body` is not an object with metadata.
std::optional<NamedEvent> named_json_event(std::string_view body) {
  Document event;
  if (!base::parse_json(body, event) || !event.IsObject() || !event.HasMember("metadata") ||
      !event["metadata"].IsObject()) {
    return std::nullopt;
  }
  Value& metadata = event["metadata"];
  auto& alloc = event.GetAllocator();
  if (!metadata.HasMember("name") || !metadata["name"].IsString() ||
      metadata["name"].GetStringLength() == 0) {
    std::string prefix = metadata.HasMember("generateName") && metadata["generateName"].IsString()
                             ? metadata["generateName"].GetString()
                             : "event.";
    metadata.RemoveMember("name");
    metadata.AddMember("name", Value((prefix + random_suffix()).c_str(), alloc), alloc);
  }
  std::string name = metadata["name"].GetString();
  return NamedEvent{std::move(name), base::to_json(event)};
}

}  // namespace

JournalEntry journal_entry_for(const kube::RequestInfo& info, const hub::OfflineWrite& write,
                               std::string body, std::string_view name) {
  JournalEntry e;
  e.created_unix = base::WallClock::unix_seconds();
  e.method = std::string(write.method);
  e.target = std::string(write.target);
  e.content_type = std::string(write.content_type);
  e.user_agent = std::string(write.user_agent);
  e.component = info.component;
  e.authorization = std::string(write.authorization);
  e.body = std::move(body);
  e.privileged_peer = info.privileged_peer;
  e.object = journal_object_key(info.api_group, info.api_version, info.resource,
                                info.namespace_name, name);
  return e;
}

std::string created_object_name(std::string_view content_type, std::string_view body) {
  if (is_protobuf(content_type)) {
    auto envelope = kube::unwrap_protobuf(body);
    auto meta = envelope ? kube::decode_object_metadata(envelope->raw) : std::nullopt;
    return meta ? meta->name : "";
  }
  Document doc;
  if (!base::parse_json(body, doc) || !doc.IsObject()) return "";
  auto metadata = doc.FindMember("metadata");
  if (metadata == doc.MemberEnd() || !metadata->value.IsObject()) return "";
  auto name = metadata->value.FindMember("name");
  return name != metadata->value.MemberEnd() && name->value.IsString() ? name->value.GetString()
                                                                       : "";
}

OfflineCreates::OfflineCreates(CacheWriter& writer, Store& store, Journal& journal,
                               TokenKeeper& tokens, const NodeAuthority* authority)
    : writer_(writer), store_(store), journal_(journal), tokens_(tokens), authority_(authority) {}

asio::awaitable<unsigned> OfflineCreates::serve(const kube::RequestInfo& info,
                                                const hub::OfflineWrite& write, bool as_node,
                                                hub::ResponseWriter& out) {
  if (is_event(info) && info.subresource.empty() && !info.namespace_name.empty()) {
    co_return co_await create_event(info, write, out);
  }
  if (as_node && info.subresource.empty() && info.api_group.empty() && info.resource == "nodes") {
    co_return co_await exists_or_offline(info, created_object_name(write.content_type, write.body),
                                         out);
  }
  if (auto kind = local_kind(info); as_node && kind) {
    co_return co_await create_locally(info, *kind, write, out);
  }
  if (as_node && info.api_group.empty() && info.resource == "serviceaccounts" &&
      info.subresource == "token") {
    co_return co_await request_token(info, write, out);
  }
  co_return co_await send_api_error(out, kube::Failure::Offline,
                                    "creating " + info.resource + " needs the apiserver");
}

asio::awaitable<unsigned> OfflineCreates::exists_or_offline(const kube::RequestInfo& info,
                                                            const std::string& name,
                                                            hub::ResponseWriter& out) {
  auto view = store_.read();
  const bool cached =
      !name.empty() && !find_copies(*view, {info.api_group, info.api_version, info.resource,
                                            info.namespace_name, name})
                            .empty();
  view.reset();
  // Errors are named before co_await: g++ 12 frees temporaries of a co_await expression wrongly.
  const kube::ApiError exists = kube::already_exists_error({name, info.api_group, info.resource});
  if (cached) co_return co_await send_status(out, exists);
  co_return co_await send_api_error(out, kube::Failure::Offline,
                                    info.resource + " \"" + name +
                                        "\" is not cached on this node, so whether it exists is "
                                        "unknown until the apiserver is back");
}

asio::awaitable<unsigned> OfflineCreates::create_locally(const kube::RequestInfo& info,
                                                         const LocalKind& kind,
                                                         const hub::OfflineWrite& write,
                                                         hub::ResponseWriter& out) {
  const std::string name = created_object_name(write.content_type, write.body);
  auto json = local_object(info, kind, write);
  if (name.empty() || !json) {
    const kube::ApiError unreadable = kube::bad_request_error(
        "the " + std::string(kind.kind) + " in the request body cannot be read");
    co_return co_await send_status(out, unreadable);
  }
  const ListIdentity get_set =
      ListIdentity{info.component, info.api_group, info.api_version, info.resource, "", "", ""}
          .get_set();
  bool exists = false;
  CacheWriter::Task task = [&](WriteTxn& txn) -> Status {
    if (!find_copies(txn,
                     {info.api_group, info.api_version, info.resource, info.namespace_name, name})
             .empty()) {
      exists = true;
      return make_error("exists");
    }
    auto record = txn.list(get_set.key());
    if (!record) {
      auto set = txn.allocate_set();
      if (!set) return set.error();
      record = ListRecord{};
      record->set_id = *set;
      record->list_kind = std::string(kind.list_kind);
      record->api_version = std::string(kind.api_version);
      if (Status s = txn.put_list(get_set.key(), *record); !s) return s;
    }
    return txn.put_object(record->set_id, info.namespace_name, name, 1, *json);
  };
  Status written = co_await run_in_writer(writer_, std::move(task));
  if (exists) {
    const kube::ApiError conflict =
        kube::already_exists_error({name, info.api_group, info.resource});
    co_return co_await send_status(out, conflict);
  }
  if (!written) {
    co_return co_await send_api_error(
        out, kube::Failure::Offline,
        "the " + std::string(kind.kind) +
            " could not be stored on the node: " + written.error().message);
  }
  YH_LOG(Info) << "offline: kept " << info.resource << " " << name
               << " locally (the cache had none; never journaled)";
  if (!co_await out.start(201, "application/json")) co_return 0;
  co_await out.write(*json);
  co_await out.finish();
  co_return 201;
}

asio::awaitable<unsigned> OfflineCreates::create_event(const kube::RequestInfo& info,
                                                       const hub::OfflineWrite& write,
                                                       hub::ResponseWriter& out) {
  std::string body = write.body;
  std::string name;
  std::string content_type = "application/json";
  if (is_protobuf(write.content_type)) {
    // Kept and replayed as sent; kubelet always names its events.
    name = created_object_name(write.content_type, write.body);
    content_type = std::string(kube::kProtobufMediaType);
  } else {
    auto named = named_json_event(write.body);
    if (!named) {
      journal_.count_refused("bad_body");
      const kube::ApiError unreadable =
          kube::bad_request_error("the event in the request body cannot be read");
      co_return co_await send_status(out, unreadable);
    }
    name = std::move(named->name);
    body = std::move(named->json);
  }
  if (name.empty()) {
    journal_.count_refused("bad_body");
    const kube::ApiError unnamed =
        kube::bad_request_error("the event in the request body has no name");
    co_return co_await send_status(out, unnamed);
  }
  JournalEntry entry = journal_entry_for(info, write, body, name);
  std::optional<Journal::Append> appended;
  CacheWriter::Task task = [&](WriteTxn& txn) -> Status {
    auto staged = journal_.stage_append(txn, entry, true);
    if (!staged) return staged.error();
    appended = std::move(*staged);
    return {};
  };
  Status written = co_await run_in_writer(writer_, std::move(task));
  if (!written) {
    if (appended) journal_.abort_append(*appended);
    journal_.count_refused("full");
    co_return co_await send_api_error(out, kube::Failure::JournalFull, written.error().message);
  }
  journal_.commit_append(*appended);
  // The created object, as the client sent it (protobuf answers protobuf: client-go decodes by
  // the response's Content-Type).
  if (!co_await out.start(201, content_type)) co_return 0;
  co_await out.write(body);
  co_await out.finish();
  co_return 201;
}

asio::awaitable<unsigned> OfflineCreates::request_token(const kube::RequestInfo& info,
                                                        const hub::OfflineWrite& write,
                                                        hub::ResponseWriter& out) {
  auto key = read_token_request(info, write.content_type, write.body);
  if (!key) {
    const kube::ApiError unreadable =
        kube::bad_request_error("the TokenRequest in the request body cannot be read");
    co_return co_await send_status(out, unreadable);
  }
  // The pod the token is bound to, as the node has it cached: NodeRestriction's checks need it.
  std::optional<std::string> pod_json;
  if (key->bound_kind == "Pod" && !key->bound_name.empty()) {
    auto view = store_.read();
    auto copies = find_copies(*view, {"", "v1", "pods", info.namespace_name, key->bound_name});
    if (const CachedCopy* pod = newest_copy(copies, info.component)) pod_json = pod->json;
  }
  Document pod;
  const bool have_pod = pod_json && base::parse_json(*pod_json, pod) && pod.IsObject();
  if (!have_pod && key->bound_kind == "Pod" && !key->bound_name.empty()) {
    co_return co_await send_api_error(out, kube::Failure::Offline,
                                      "pod \"" + key->bound_name +
                                          "\" is not cached on this node, so a token bound to it "
                                          "cannot be checked");
  }
  if (authority_ != nullptr) {
    const NodeAuthority::BoundObject bound{key->bound_kind, key->bound_api_version, key->bound_name,
                                           key->bound_uid};
    if (auto refused = authority_->admit_token_request(info, bound, have_pod ? &pod : nullptr)) {
      const kube::ApiError forbidden = std::move(*refused);
      co_return co_await send_status(out, forbidden);
    }
  }
  auto answer = tokens_.answer(*key);
  if (!answer.kept) {
    YH_LOG(Warning) << "offline: no valid token kept for " << info.namespace_name << "/"
                    << info.name << " bound to pod " << key->bound_name
                    << "; answering a placeholder token that expires in a minute";
  }
  if (!co_await out.start(201, "application/json")) co_return 0;
  co_await out.write(answer.json);
  co_await out.finish();
  co_return 201;
}

}  // namespace yurthub::cache
