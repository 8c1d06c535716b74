// Offline answers from the cache; see local_proxy.h.
#include "cache/local_proxy.h"

#include <random>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/base64.h"
#include "base/clock.h"
#include "base/json_parse.h"
#include "cache/cached_lists.h"
#include "cache/local_events.h"
#include "kube/field_labels.h"
#include "kube/selector.h"
#include "kube/status.h"
#include "kube/watch_list.h"

namespace yurthub::cache {
namespace asio = boost::asio;

std::string item_kind(const ListRecord& record) {
  const std::string& k = record.list_kind;
  return k.size() > 4 && k.compare(k.size() - 4, 4, "List") == 0 ? k.substr(0, k.size() - 4) : k;
}

std::string as_get_response(std::string_view json, const ListRecord& record) {
  std::size_t i = 1;
  while (i < json.size() &&
         (json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r'))
    ++i;
  if (json.empty() || json[0] != '{' || json.compare(i, 6, "\"kind\"") == 0 ||
      item_kind(record).empty()) {
    return std::string(json);
  }
  const bool empty_object = i < json.size() && json[i] == '}';
  return "{\"kind\":" + quoted(item_kind(record)) +
         ",\"apiVersion\":" + quoted(record.api_version) + (empty_object ? "" : ",") +
         std::string(json.substr(1));
}

kube::ApiError not_cached_error(const kube::RequestInfo& info) {
  return kube::api_error(kube::Failure::NotFound, info.resource +
                                                      " is not cached on this node for " +
                                                      info.component + " (the node is offline)");
}

std::optional<ListChoice> choose_list(ReadView& view, const ListIdentity& wanted,
                                      const kube::LabelSelector& label,
                                      const kube::FieldSelector& field) {
  std::optional<ListChoice> best;
  const auto prefix = ListIdentity::resource_prefix(wanted.component, wanted.group, wanted.version,
                                                    wanted.resource, wanted.owner);
  for (auto& [key, record] : view.lists_with_prefix(prefix)) {
    auto id = ListIdentity::parse(key);
    if (!id || id->is_get_set() || !record.complete || record.set_id == 0) continue;
    if (!id->namespace_name.empty() && id->namespace_name != wanted.namespace_name) continue;
    auto cached_label = kube::LabelSelector::parse(id->label_selector);
    auto cached_field = kube::FieldSelector::parse(id->field_selector);
    if (!cached_label || !cached_field || !cached_label->covers(label) ||
        !cached_field->covers(field))
      continue;
    if (*id == wanted) return ListChoice{*id, record};
    if (!best || record.synced_unix > best->record.synced_unix) best = ListChoice{*id, record};
  }
  return best;
}

std::string encode_continue(const ContinuePoint& point) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("s");
  w.Uint(point.set);
  w.Key("n");
  w.String(point.namespace_name.c_str(),
           static_cast<rapidjson::SizeType>(point.namespace_name.size()));
  w.Key("m");
  w.String(point.name.c_str(), static_cast<rapidjson::SizeType>(point.name.size()));
  w.EndObject();
  return "yh1." + base::encode_base64url({buf.GetString(), buf.GetSize()});
}

std::optional<ContinuePoint> decode_continue(std::string_view token) {
  if (token.substr(0, 4) != "yh1.") return std::nullopt;
  auto raw = base::decode_base64url(token.substr(4));  // unpadded, as encoded
  if (!raw) return std::nullopt;
  rapidjson::Document doc;
  if (!base::parse_json(*raw, doc) || !doc.IsObject() || !doc.HasMember("s") ||
      !doc["s"].IsUint() || !doc.HasMember("n") || !doc["n"].IsString() || !doc.HasMember("m") ||
      !doc["m"].IsString()) {
    return std::nullopt;
  }
  return ContinuePoint{doc["s"].GetUint(), doc["n"].GetString(), doc["m"].GetString()};
}

LocalProxy::LocalProxy(Store& store, CacheMetrics& metrics, LocalEvents& events, Options options)
    : store_(store), metrics_(metrics), events_(events), options_(options) {}

bool watch_selects(const kube::LabelSelector& label, const kube::FieldSelector& field,
                   const kube::RequestInfo& info, const LocalChange& change) {
  if (!info.name.empty() && info.name != change.name) return false;
  rapidjson::Document doc;
  return base::parse_json(change.json, doc) && doc.IsObject() && label.matches_object(doc) &&
         field.matches(doc, info.api_group, info.resource);
}

Page read_page(ReadView& view, std::uint32_t set, const kube::RequestInfo& info,
               const std::optional<ContinuePoint>& from, const kube::LabelSelector* label_filter,
               const kube::FieldSelector* field_filter, std::size_t limit) {
  Page page{{}, ContinuePoint{set, "", ""}, false};
  view.scan(
      set, info.namespace_name, from ? from->namespace_name : "", from ? from->name : "",
      [&](std::string_view ns, std::string_view name, const StoredObject& object) {
        if (label_filter != nullptr || field_filter != nullptr) {
          rapidjson::Document doc;
          if (!base::parse_json(object.json, doc) || !doc.IsObject()) return true;
          if (label_filter != nullptr && !label_filter->matches_object(doc)) return true;
          if (field_filter != nullptr && !field_filter->matches(doc, info.api_group, info.resource))
            return true;
        }
        if (limit && page.items.size() == limit) {
          page.more = true;
          return false;
        }
        page.items.push_back(object.json);
        if (limit) {
          page.last.namespace_name.assign(ns);
          page.last.name.assign(name);
        }
        return true;
      });
  return page;
}

asio::awaitable<unsigned> LocalProxy::serve(const kube::RequestInfo& info,
                                            const std::optional<ListIdentity>& identity,
                                            hub::ResponseWriter& out) {
  unsigned code = 0;
  const bool selects =
      info.is_resource_request && (info.verb == kube::Verb::List || info.verb == kube::Verb::Watch);
  // As the apiserver: the selectors are refused when the options are decoded (400), then the
  // options validated (422: resourceVersionMatch, sendInitialEvents).
  std::optional<kube::ApiError> refused;
  if (selects) {
    if (auto bad_selector = invalid_selector(info))
      refused = kube::bad_request_error(std::move(*bad_selector));
    else
      refused = kube::invalid_list_options(info);
  }
  if (refused)
    code = co_await send_status(out, *refused);
  else if (!identity)
    code = co_await discovery(info, out);
  else if (info.verb == kube::Verb::Get)
    code = co_await get(info, *identity, out);
  else if (info.verb == kube::Verb::List)
    code = co_await list(info, *identity, out);
  else if (info.verb == kube::Verb::Watch)
    code = co_await watch(info, *identity, out);
  metrics_.offline_requests.with({kube::verb_name(info.verb), std::to_string(code)}).inc();
  co_return code;
}

asio::awaitable<unsigned> LocalProxy::get(const kube::RequestInfo& info,
                                          const ListIdentity& identity, hub::ResponseWriter& out) {
  auto view = store_.read();
  // The object may sit in the get set and in any of the component's lists: take the newest.
  std::optional<std::string> best;
  std::uint64_t best_rv = 0;
  const auto prefix = ListIdentity::resource_prefix(
      identity.component, identity.group, identity.version, identity.resource, identity.owner);
  for (const auto& [key, record] : view->lists_with_prefix(prefix)) {
    if (record.set_id == 0) continue;
    auto object = view->object(record.set_id, info.namespace_name, info.name);
    if (object && (!best || object->resource_version >= best_rv)) {
      best = as_get_response(object->json, record);
      best_rv = object->resource_version;
    }
  }
  metrics_.lookups.with({"get", best ? "hit" : "miss"}).inc();
  view.reset();  // no read transaction is held while a client reads (it would pin LMDB's pages)
  if (!best) {
    co_return co_await send_api_error(out, kube::Failure::NotFound,
                                      info.resource + " \"" + info.name + "\" not found");
  }
  if (!co_await out.start(200, "application/json")) co_return 0;
  co_await out.write(*best);
  co_await out.finish();
  co_return 200;
}

asio::awaitable<unsigned> LocalProxy::discovery(const kube::RequestInfo& info,
                                                hub::ResponseWriter& out) {
  auto document = store_.read()->discovery(info.path);
  metrics_.lookups.with({"discovery", document ? "hit" : "miss"}).inc();
  if (!document) {
    co_return co_await send_api_error(out, kube::Failure::NotFound,
                                      "the server could not find the requested resource");
  }
  if (!co_await out.start(200, "application/json")) co_return 0;
  co_await out.write(*document);
  co_await out.finish();
  co_return 200;
}

asio::awaitable<unsigned> LocalProxy::list(const kube::RequestInfo& info,
                                           const ListIdentity& identity, hub::ResponseWriter& out) {
  auto label = kube::LabelSelector::parse(info.label_selector);
  auto field = kube::FieldSelector::parse(info.field_selector);
  auto view = store_.read();
  std::optional<ListChoice> choice;
  if (label && field) choice = choose_list(*view, identity, *label, *field);
  metrics_.lookups.with({"list", choice ? "hit" : "miss"}).inc();
  if (!choice) {
    view.reset();
    co_return co_await send_status(out, not_cached_error(info));
  }
  const ListRecord& record = choice->record;
  std::optional<ContinuePoint> from;
  if (!info.continue_token.empty()) {
    from = decode_continue(info.continue_token);
    if (!from || from->set != record.set_id) {
      view.reset();
      co_return co_await send_api_error(
          out, kube::Failure::Expired,
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter.");
    }
  }
  // The selectors the cached list did not apply, filtered here; null: already applied.
  const kube::LabelSelector* label_filter =
      choice->identity.label_selector != identity.label_selector ? &*label : nullptr;
  const kube::FieldSelector* field_filter =
      choice->identity.field_selector != identity.field_selector ? &*field : nullptr;
  const std::size_t limit =
      info.limit && *info.limit > 0 ? static_cast<std::size_t>(*info.limit) : 0;
  Page page = read_page(*view, record.set_id, info, from, label_filter, field_filter, limit);
  std::string head = list_head(record.list_kind, record.api_version, record.resource_version,
                               page.more ? encode_continue(page.last) : std::string());
  co_return co_await write_list(head, page.items, view, out);
}

asio::awaitable<unsigned> LocalProxy::write_list(std::string& piece,
                                                 std::vector<std::string_view>& items,
                                                 std::unique_ptr<ReadView>& view,
                                                 hub::ResponseWriter& out) {
  const auto release_at = base::Clock::now() + options_.snapshot_hold;
  if (!co_await out.start(200, "application/json")) co_return 0;
  piece.reserve(options_.write_bytes * 2);
  const auto append = [&](std::size_t i) {
    if (i) piece += ',';
    piece.append(items[i]);
  };
  std::size_t next = 0;
  for (; next < items.size(); ++next) {
    if (piece.size() >= options_.write_bytes) {
      if (base::Clock::now() >= release_at) break;
      if (!co_await out.write(piece)) co_return 200;
      piece.clear();
    }
    append(next);
  }
  if (next < items.size()) {  // a slow client: copy the rest out of the snapshot
    std::size_t bytes = piece.size() + 2;
    for (std::size_t i = next; i < items.size(); ++i) bytes += items[i].size() + 1;
    piece.reserve(bytes);
    for (; next < items.size(); ++next) append(next);
  }
  items.clear();
  view.reset();
  piece += "]}";
  for (std::size_t at = 0; at < piece.size(); at += options_.write_bytes) {
    if (!co_await out.write(std::string_view(piece).substr(at, options_.write_bytes)))
      co_return 200;
  }
  co_await out.finish();
  co_return 200;
}

}  // namespace yurthub::cache
