// Offline patch, update and event create; see offline_writes.h. Runs on worker threads; the
// cache is read and written in one CacheWriter task per request, so offline writes to one object
// apply one after another, in the order they reach the writer.
#include "cache/offline_writes.h"

#include <chrono>
#include <random>

#include <rapidjson/document.h>

#include "cache/list_identity.h"
#include "cache/local_proxy.h"
#include "cache/offline_apply.h"
#include "cache/writer_task.h"
#include "hub/json_parse.h"
#include "hub/log.h"

namespace yurthub::cache {
namespace {

namespace net = boost::asio;

bool is_lease(const hub::RequestInfo& info) {
  return info.api_group == "coordination.k8s.io" && info.resource == "leases";
}

bool is_event(const hub::RequestInfo& info) {
  return (info.api_group.empty() || info.api_group == "events.k8s.io") && info.resource == "events";
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One cached copy of the object: which set holds it, as whom.
struct Copy {
  ListIdentity identity;
  ListRecord record;
  std::uint64_t resource_version = 0;
  std::string json;  // with kind and apiVersion
};

// Every cached copy of the request's object, in every component's sets of its resource.
std::vector<Copy> find_copies(ReadView& view, const hub::RequestInfo& info) {
  std::vector<Copy> copies;
  for (auto& [key, record] : view.lists_with_prefix("")) {
    if (record.set_id == 0) continue;
    auto identity = ListIdentity::parse(key);
    if (!identity || identity->group != info.api_group || identity->version != info.api_version ||
        identity->resource != info.resource ||
        (!identity->namespace_name.empty() && identity->namespace_name != info.namespace_name)) {
      continue;
    }
    auto object = view.object(record.set_id, info.namespace_name, info.name);
    if (!object) continue;
    copies.push_back(Copy{std::move(*identity), record, object->resource_version,
                          as_get_response(object->json, record)});
  }
  return copies;
}

// The copy to apply the write to: the newest, the writer's own on a tie.
const Copy* base_copy(const std::vector<Copy>& copies, const std::string& component) {
  const Copy* best = nullptr;
  for (const Copy& c : copies) {
    if (!best || c.resource_version > best->resource_version ||
        (c.resource_version == best->resource_version && c.identity.component == component)) {
      best = &c;
    }
  }
  return best;
}

// What the writer task decided, read by the coroutine once the task is done.
struct Outcome {
  std::optional<WriteRefusal> refused;
  std::string response;               // what the client gets: the written object
  std::vector<LocalChange> changes;   // one per updated copy
  std::optional<Journal::Append> appended;
};

std::string random_suffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as k8s' utilrand.String
  thread_local std::mt19937 rng{std::random_device{}()};
  std::string out;
  for (int i = 0; i < 5; ++i) out += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return out;
}

JournalEntry entry_for(const hub::RequestInfo& info, const hub::OfflineWrite& write) {
  JournalEntry e;
  e.created_unix = unix_now();
  e.method = std::string(write.method);
  e.target = std::string(write.target);
  e.content_type = std::string(write.content_type);
  e.user_agent = std::string(write.user_agent);
  e.component = info.component;
  e.authorization = std::string(write.authorization);
  e.body = write.body;
  return e;
}

}  // namespace

OfflineWrites::OfflineWrites(CacheWriter& writer, Journal& journal, LocalEvents& events,
                             const CachePolicy& policy, CacheMetrics& metrics)
    : writer_(writer), journal_(journal), events_(events), policy_(policy), metrics_(metrics) {}

bool OfflineWrites::handles(const hub::RequestInfo& info) const {
  if (!info.is_resource_request || info.component.empty() || !policy_.is_agent(info.component)) {
    return false;
  }
  if (info.verb == "create") return is_event(info) && info.subresource.empty() && !info.namespace_name.empty();
  if (info.verb != "patch" && info.verb != "update") return false;
  return !info.name.empty() && (info.subresource.empty() || info.subresource == "status");
}

net::awaitable<unsigned> OfflineWrites::serve(const hub::RequestInfo& info,
                                              const hub::OfflineWrite& write,
                                              hub::ResponseWriter& out) {
  const unsigned code = info.verb == "create" ? co_await create_event(info, write, out)
                                              : co_await write_object(info, write, out);
  metrics_.offline_requests.with({info.verb, std::to_string(code)}).inc();
  co_return code;
}

net::awaitable<unsigned> OfflineWrites::write_object(const hub::RequestInfo& info,
                                                     const hub::OfflineWrite& write,
                                                     hub::ResponseWriter& out) {
  const bool lease = is_lease(info);
  const bool journaled = !lease;
  auto outcome = std::make_shared<Outcome>();
  JournalEntry entry = entry_for(info, write);
  entry.object = journal_object_key(info.api_group, info.api_version, info.resource,
                                    info.namespace_name, info.name);
  // A lease body kubelet sends as protobuf cannot be read; the lease is not replayed anyway, so
  // kubelet gets the cached lease back, as YurtHub answers every offline lease write.
  const bool keep_cached = lease && media_type(write.content_type) != "application/json";
  // Named: g++ 12 mishandles a lambda temporary inside a co_await expression.
  CacheWriter::Task task = [&, outcome](WriteTxn& txn) -> Status {
    std::vector<Copy> copies = find_copies(txn, info);
    const Copy* base = base_copy(copies, info.component);
    if (base == nullptr) {
      outcome->refused = WriteRefusal{hub::Failure::Offline,
                                      info.resource + " \"" + info.name +
                                          "\" is not cached on this node, so it cannot be changed "
                                          "while offline",
                                      "not_cached"};
      return make_error("refused");
    }
    if (keep_cached) {
      outcome->response = base->json;
      return {};
    }
    auto applied = apply_offline_write(base->json, base->resource_version, info,
                                       write.content_type, write.body);
    if (auto* refused = std::get_if<WriteRefusal>(&applied)) {
      outcome->refused = std::move(*refused);
      return make_error("refused");
    }
    const std::string& updated = std::get<std::string>(applied);
    for (const Copy& copy : copies) {
      std::string json = carry_change(base->json, updated, copy.json);
      if (Status s = txn.put_object(copy.record.set_id, info.namespace_name, info.name,
                                    copy.resource_version, json);
          !s) {
        return s;
      }
      outcome->changes.push_back(LocalChange{copy.identity.component, info.api_group,
                                             info.api_version, info.resource,
                                             info.namespace_name, info.name, std::move(json)});
    }
    outcome->response = updated;
    if (!journaled) return {};
    entry.base_resource_version = base->resource_version;
    if (info.verb == "update") entry.base = base->json;
    auto appended = journal_.stage_append(txn, std::move(entry), false);
    if (!appended) {
      outcome->refused = WriteRefusal{hub::Failure::JournalFull, appended.error().message, "full"};
      return make_error("refused");
    }
    outcome->appended = std::move(*appended);
    return {};
  };
  Status written = co_await run_in_writer(writer_, std::move(task));
  if (outcome->refused) {
    journal_.count_refused(outcome->refused->reason);
    co_return co_await send_api_error(out, outcome->refused->failure, outcome->refused->message);
  }
  if (!written) {
    YH_LOG(Error) << "journal: cannot store an offline " << info.verb << " of " << info.resource
                  << " " << info.namespace_name << "/" << info.name << ": "
                  << written.error().message;
    journal_.count_refused("store");
    co_return co_await send_api_error(out, hub::Failure::Offline,
                                      "the write could not be stored on the node: " +
                                          written.error().message);
  }
  if (outcome->appended) journal_.commit_append(*outcome->appended);
  for (const LocalChange& change : outcome->changes) events_.publish(change);
  if (!co_await out.start(200, "application/json")) co_return 0;
  co_await out.write(outcome->response);
  co_await out.finish();
  co_return 200;
}

net::awaitable<unsigned> OfflineWrites::create_event(const hub::RequestInfo& info,
                                                     const hub::OfflineWrite& write,
                                                     hub::ResponseWriter& out) {
  rapidjson::Document event;
  if (media_type(write.content_type) != "application/json" || !hub::parse_json(write.body, event) ||
      !event.IsObject() || !event.HasMember("metadata") || !event["metadata"].IsObject()) {
    journal_.count_refused("unsupported_media_type");
    co_return co_await send_api_error(out, hub::Failure::Offline,
                                      "only JSON events are kept while the node is offline");
  }
  rapidjson::Value& metadata = event["metadata"];
  auto& alloc = event.GetAllocator();
  if (!metadata.HasMember("name") || !metadata["name"].IsString() ||
      metadata["name"].GetStringLength() == 0) {
    // The name the apiserver would generate: generateName plus five random characters.
    std::string prefix = metadata.HasMember("generateName") && metadata["generateName"].IsString()
                             ? metadata["generateName"].GetString()
                             : "event.";
    metadata.RemoveMember("name");
    metadata.AddMember("name", rapidjson::Value((prefix + random_suffix()).c_str(), alloc), alloc);
  }
  JournalEntry entry = entry_for(info, write);
  entry.body = hub::to_json(event);
  entry.object = journal_object_key(info.api_group, info.api_version, info.resource,
                                    info.namespace_name, metadata["name"].GetString());
  std::optional<Journal::Append> appended;
  CacheWriter::Task task = [&](WriteTxn& txn) -> Status {
    auto staged = journal_.stage_append(txn, entry, true);
    if (!staged) return staged.error();
    appended = std::move(*staged);
    return {};
  };
  Status written = co_await run_in_writer(writer_, std::move(task));
  if (!written) {
    journal_.count_refused("full");
    co_return co_await send_api_error(out, hub::Failure::JournalFull, written.error().message);
  }
  journal_.commit_append(*appended);
  if (!co_await out.start(201, "application/json")) co_return 0;
  co_await out.write(entry.body);
  co_await out.finish();
  co_return 201;
}

}  // namespace yurthub::cache
