// Offline patch and update, and the dispatch of offline writes; see offline_writes.h. Runs on
// worker threads; the cache is read and written in one CacheWriter task per request, so offline
// writes to one object apply one after another, in the order they reach the writer.
#include "cache/offline_writes.h"

#include <rapidjson/document.h>

#include "base/log.h"
#include "cache/cached_copies.h"
#include "cache/list_identity.h"
#include "cache/local_proxy.h"
#include "cache/offline_apply.h"
#include "cache/writer_task.h"
#include "kube/protobuf_json.h"
#include "kube/protobuf_wire.h"

namespace yurthub::cache {
namespace {

namespace asio = boost::asio;

bool is_lease(const kube::RequestInfo& info) {
  return info.api_group == "coordination.k8s.io" && info.resource == "leases";
}

bool is_event(const kube::RequestInfo& info) {
  return (info.api_group.empty() || info.api_group == "events.k8s.io") && info.resource == "events";
}

// What the writer task decided, read by the coroutine once the task is done.
struct Outcome {
  std::optional<WriteRefusal> refused;
  std::string response;              // what the client gets: the written object
  std::vector<LocalChange> changes;  // one per updated copy
  std::optional<Journal::Append> appended;
};

// The kind a protobuf body sent to this resource must hold, when kube::protobuf_object_json reads
// it: kubelet's lease renewals and its CSINode updates. Empty otherwise.
std::string_view protobuf_kind(const kube::RequestInfo& info) {
  if (is_lease(info)) return "Lease";
  if (info.api_group == "storage.k8s.io" && info.resource == "csinodes") return "CSINode";
  return {};
}

// The body in JSON, when it came as protobuf: kubelet's lease renewals and CSINode updates are
// applied, and journaled, in their JSON form (the apiserver takes either; the replay's re-basing
// reads JSON). nullopt: the body is used as sent.
Result<std::optional<std::string>> json_form(const kube::RequestInfo& info,
                                             const hub::OfflineWrite& write) {
  if (info.verb != kube::Verb::Update || !info.subresource.empty() ||
      media_type(write.content_type) != kube::kProtobufMediaType || protobuf_kind(info).empty()) {
    return std::optional<std::string>();
  }
  auto json = kube::protobuf_object_json(write.body, protobuf_kind(info),
                                         info.api_group + "/" + info.api_version);
  if (!json) return json.error();
  return std::optional<std::string>(std::move(*json));
}

// Writes `updated` (the write applied to `base`) into every cached copy of the object, each
// keeping its own differences from `base`; the changes go to `outcome` for the local watches.
Status put_copies(WriteTxn& txn, const std::vector<CachedCopy>& copies, const CachedCopy& base,
                  const std::string& updated, const kube::RequestInfo& info,
                  const std::string& owner, Outcome& outcome) {
  for (const CachedCopy& copy : copies) {
    std::string json = carry_change(base.json, updated, copy.json);
    if (Status s = txn.put_object(copy.record.set_id, info.namespace_name, info.name,
                                  copy.resource_version, json);
        !s) {
      return s;
    }
    outcome.changes.push_back(LocalChange{copy.identity.component, info.api_group, info.api_version,
                                          info.resource, info.namespace_name, info.name,
                                          std::move(json), owner});
  }
  return {};
}

// After the writer task: commits the journal entry and tells the local watches, or aborts it,
// and answers the client (the written object, or why not). Returns the HTTP code sent.
asio::awaitable<unsigned> finish_write(Journal& journal, LocalEvents& events,
                                       const kube::RequestInfo& info, const Status& written,
                                       Outcome& outcome, hub::ResponseWriter& out) {
  if (!written && outcome.appended) journal.abort_append(*outcome.appended);
  if (outcome.refused) {
    journal.count_refused(outcome.refused->reason);
    co_return co_await send_status(out, outcome.refused->error);
  }
  if (!written) {
    YH_LOG(Error) << "journal: cannot store an offline " << kube::verb_name(info.verb) << " of "
                  << info.resource << " " << info.namespace_name << "/" << info.name << ": "
                  << written.error().message;
    journal.count_refused("store");
    co_return co_await send_api_error(
        out, kube::Failure::Offline,
        "the write could not be stored on the node: " + written.error().message);
  }
  if (outcome.appended) journal.commit_append(*outcome.appended);
  for (const LocalChange& change : outcome.changes) events.publish(change);
  if (!co_await out.start(200, "application/json")) co_return 0;
  co_await out.write(outcome.response);
  co_await out.finish();
  co_return 200;
}

}  // namespace

OfflineWrites::OfflineWrites(CacheWriter& writer, Store& store, Journal& journal,
                             LocalEvents& events, const CachePolicy& policy, CacheMetrics& metrics,
                             TokenKeeper& tokens, Callers& callers, const NodeAuthority* authority)
    : writer_(writer),
      journal_(journal),
      events_(events),
      policy_(policy),
      metrics_(metrics),
      callers_(callers),
      authority_(authority),
      creates_(writer, store, journal, tokens, authority) {}

bool OfflineWrites::handles(const kube::RequestInfo& info) const {
  if (!info.is_resource_request || info.component.empty() || !policy_.is_agent(info.component)) {
    return false;
  }
  if (info.verb == kube::Verb::Create) {
    // Events, and what kubelet creates when it starts (OfflineCreates).
    return (is_event(info) && info.subresource.empty()) ||
           (info.api_group.empty() && info.resource == "nodes") ||
           (info.api_group == "storage.k8s.io" && info.resource == "csinodes") ||
           (is_lease(info) && info.subresource.empty()) ||
           (info.api_group.empty() && info.resource == "serviceaccounts" &&
            info.subresource == "token");
  }
  if (info.verb != kube::Verb::Patch && info.verb != kube::Verb::Update) return false;
  return !info.name.empty() && (info.subresource.empty() || info.subresource == "status");
}

asio::awaitable<unsigned> OfflineWrites::serve(const kube::RequestInfo& info,
                                               const hub::OfflineWrite& write,
                                               hub::ResponseWriter& out) {
  // A caller's own token must be one the apiserver accepted; its write changes only its copies.
  auto verdict = callers_.verify(info);
  if (auto* refused = std::get_if<kube::ApiError>(&verdict)) {
    journal_.count_refused("unverified");
    const kube::ApiError error = *refused;
    const unsigned sent = co_await send_status(out, error);
    metrics_.offline_requests.with({kube::verb_name(info.verb), std::to_string(sent)}).inc();
    co_return sent;
  }
  const std::string owner = std::get<std::string>(verdict);
  // The hub's own credentials are the node's: what the apiserver would refuse them is refused.
  const bool as_node = !info.bearer_token && authority_ != nullptr;
  const std::optional<kube::ApiError> denied =
      as_node
          ? authority_->authorize(info, info.verb == kube::Verb::Create
                                            ? created_object_name(write.content_type, write.body)
                                            : std::string())
          : std::nullopt;
  if (denied) journal_.count_refused("forbidden");
  const unsigned code = denied ? co_await send_status(out, *denied)
                        : info.verb == kube::Verb::Create
                            ? co_await creates_.serve(info, write, as_node, out)
                            : co_await write_object(info, write, as_node, owner, out);
  metrics_.offline_requests.with({kube::verb_name(info.verb), std::to_string(code)}).inc();
  co_return code;
}

asio::awaitable<unsigned> OfflineWrites::write_object(const kube::RequestInfo& info,
                                                      const hub::OfflineWrite& write, bool as_node,
                                                      const std::string& owner,
                                                      hub::ResponseWriter& out) {
  const bool journaled = !is_lease(info);
  auto outcome = std::make_shared<Outcome>();
  auto converted = json_form(info, write);
  if (!converted) {
    journal_.count_refused("bad_body");
    const kube::ApiError unreadable = kube::bad_request_error(converted.error().message);
    co_return co_await send_status(out, unreadable);
  }
  const std::string_view content_type = *converted ? "application/json" : write.content_type;
  const std::string_view body = *converted ? std::string_view(**converted) : write.body;
  JournalEntry entry = journal_entry_for(info, write, std::string(body), info.name);
  entry.content_type = std::string(content_type);
  AdmitWrite admit;
  if (as_node) {
    admit = [this, &info](const rapidjson::Value& before, const rapidjson::Value& patched) {
      return authority_->admit_update(info, before, patched);
    };
  }
  // Named: g++ 12 mishandles a lambda temporary inside a co_await expression.
  CacheWriter::Task task = [&, outcome](WriteTxn& txn) -> Status {
    std::vector<CachedCopy> copies = find_copies(
        txn,
        {info.api_group, info.api_version, info.resource, info.namespace_name, info.name, owner});
    const CachedCopy* base = newest_copy(copies, info.component);
    if (base == nullptr) {
      outcome->refused = WriteRefusal{kube::Failure::Offline,
                                      info.resource + " \"" + info.name +
                                          "\" is not cached on this node, so it cannot be changed "
                                          "while offline",
                                      "not_cached"};
      return make_error("refused");
    }
    auto applied =
        apply_offline_write(base->json, base->resource_version, info, content_type, body, admit);
    if (auto* refused = std::get_if<WriteRefusal>(&applied)) {
      outcome->refused = std::move(*refused);
      return make_error("refused");
    }
    const std::string& updated = std::get<std::string>(applied);
    if (Status s = put_copies(txn, copies, *base, updated, info, owner, *outcome); !s) return s;
    outcome->response = updated;
    if (!journaled) return {};
    entry.base_resource_version = base->resource_version;
    if (info.verb == kube::Verb::Update) entry.base = base->json;
    auto appended = journal_.stage_append(txn, std::move(entry), false);
    if (!appended) {
      outcome->refused = WriteRefusal{kube::Failure::JournalFull, appended.error().message, "full"};
      return make_error("refused");
    }
    outcome->appended = std::move(*appended);
    return {};
  };
  Status written = co_await run_in_writer(writer_, std::move(task));
  co_return co_await finish_write(journal_, events_, info, written, *outcome, out);
}

}  // namespace yurthub::cache
