// Informer: a Reflector (reflector.h) whose sink keeps the objects parsed, published as an
// immutable snapshot after every change; see informer.h.
//
// Threading: the sink runs on the reflector's executor; the snapshot and the flags other threads
// read are atomics.
#include "net/informer.h"

#include <optional>
#include <string_view>

#include "base/clock.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "net/reflector.h"

namespace yurthub::net {
using Clock = base::Clock;

namespace {

// Routine re-lists are logged at most this often.
constexpr auto kLogInterval = std::chrono::seconds(60);

const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const rapidjson::Value& v, const char* name) {
  const rapidjson::Value* m = member(v, name);
  return m && m->IsString() ? std::string(m->GetString(), m->GetStringLength()) : std::string();
}

std::string resource_version_of(const rapidjson::Value& object) {
  const rapidjson::Value* meta = member(object, "metadata");
  return meta ? string_member(*meta, "resourceVersion") : std::string();
}

// "namespace/name", "name" when cluster-scoped, "" when the object has no name.
std::string key_of(const rapidjson::Value& object) {
  const rapidjson::Value* meta = member(object, "metadata");
  if (!meta) return {};
  std::string name = string_member(*meta, "name");
  if (name.empty()) return {};
  std::string ns = string_member(*meta, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

// A list item as its own Document. List items carry no kind/apiVersion: they are added (from the
// list's "ConfigMapList" and apiVersion) so objects look alike whether listed or watched.
std::shared_ptr<const rapidjson::Document> copy_item(const rapidjson::Value& item,
                                                     const std::string& kind,
                                                     const std::string& api_version) {
  auto doc = std::make_shared<rapidjson::Document>();
  auto& alloc = doc->GetAllocator();
  doc->CopyFrom(item, alloc);
  if (!kind.empty() && doc->IsObject() && !doc->HasMember("kind")) {
    doc->AddMember("kind", rapidjson::Value(kind, alloc), alloc);
    doc->AddMember("apiVersion", rapidjson::Value(api_version, alloc), alloc);
  }
  return doc;
}

}  // namespace

class Informer::Sink : public ReflectorSink {
 public:
  Sink(std::string name, OnChange on_change)
      : name_(std::move(name)),
        on_change_(std::move(on_change)),
        objects_(std::make_shared<const ObjectMap>()) {
    snapshot.store(objects_);
  }

  Status listed(std::string_view body, std::string* resource_version) override;
  void missing() override;
  EventVerdict event(std::string_view raw, std::string* resource_version,
                     std::string* reason) override;
  void events_done() override;
  void stopped() override { on_change_ = nullptr; }  // releases what the owner captured

  std::atomic<ObjectSnapshot> snapshot;

 private:
  void publish(ObjectSnapshot next);
  void note_listed(std::size_t count, const std::string& version);

  std::string name_;
  OnChange on_change_;
  ObjectSnapshot objects_;            // the map last published
  std::optional<ObjectMap> working_;  // copy-on-write within one piece of a watch
  bool listed_once_ = false;
  Clock::time_point last_list_log_{};
};

// Replaces the map with the list's items. Objects whose resourceVersion did not change keep
// their Document, and a re-list that changes nothing publishes nothing.
Status Informer::Sink::listed(std::string_view body, std::string* resource_version) {
  rapidjson::Document list;
  if (Status parsed = base::parse_json(body, list); !parsed) {
    return make_error("list is not a JSON object: " + parsed.error().message);
  }
  if (!list.IsObject()) return make_error("list is not a JSON object");
  const rapidjson::Value* items = member(list, "items");
  if (!items || !(items->IsArray() || items->IsNull())) return make_error("list has no items");
  std::string version = resource_version_of(list);
  if (version.empty()) return make_error("list has no metadata.resourceVersion");
  std::string kind = string_member(list, "kind");
  kind = kind.size() > 4 && kind.ends_with("List") ? kind.substr(0, kind.size() - 4) : "";
  const std::string api_version = string_member(list, "apiVersion");

  auto next = std::make_shared<ObjectMap>();
  bool changed = !listed_once_;
  std::size_t unnamed = 0;
  static const rapidjson::Value kNoItems(rapidjson::kArrayType);  // "items": null (Go's nil slice)
  for (const auto& item : (items->IsArray() ? *items : kNoItems).GetArray()) {
    std::string key = key_of(item);
    if (key.empty()) {
      ++unnamed;
      continue;
    }
    auto old = objects_->find(key);
    const std::string item_version = resource_version_of(item);
    if (old != objects_->end() && !item_version.empty() &&
        resource_version_of(*old->second) == item_version) {
      next->insert_or_assign(std::move(key), old->second);
      continue;
    }
    changed = true;
    next->insert_or_assign(std::move(key), copy_item(item, kind, api_version));
  }
  if (unnamed > 0) {
    YH_LOG(Warning) << "informer " << name_ << ": ignored " << unnamed
                    << " listed objects without metadata.name";
  }
  changed = changed || next->size() != objects_->size();
  listed_once_ = true;
  note_listed(next->size(), version);
  *resource_version = std::move(version);
  if (changed) working_.emplace(std::move(*next));  // published by events_done()
  return Status{};
}

void Informer::Sink::missing() {
  const bool changed = !listed_once_ || !objects_->empty();
  listed_once_ = true;
  if (changed) publish(std::make_shared<const ObjectMap>());
}

EventVerdict Informer::Sink::event(std::string_view raw, std::string* resource_version,
                                   std::string* reason) {
  rapidjson::Document event;
  const rapidjson::Value* object = base::parse_json(raw, event) ? member(event, "object") : nullptr;
  if (!object || !object->IsObject()) {
    *reason = "watch event without an object: " + std::string(raw.substr(0, 200));
    return EventVerdict::Failed;
  }
  const std::string type = string_member(event, "type");
  if (type == "ERROR") {
    const rapidjson::Value* code = member(*object, "code");
    const int status = code && code->IsInt() ? code->GetInt() : 0;
    *reason = "ERROR event " + std::to_string(status) + ": " + string_member(*object, "message");
    return status == 410 ? EventVerdict::Relist : EventVerdict::Failed;
  }
  if (type != "BOOKMARK") {
    const std::string key = key_of(*object);
    if (key.empty() || (type != "ADDED" && type != "MODIFIED" && type != "DELETED")) {
      *reason = "unexpected watch event: " + std::string(raw.substr(0, 200));
      return EventVerdict::Failed;
    }
    const ObjectMap& current = working_ ? *working_ : *objects_;
    if (type != "DELETED" || current.count(key) > 0) {
      if (!working_) working_.emplace(*objects_);
      if (type == "DELETED") {
        working_->erase(key);
      } else {
        auto doc = std::make_shared<rapidjson::Document>();
        doc->CopyFrom(*object, doc->GetAllocator());
        working_->insert_or_assign(key, std::move(doc));
      }
    }
  }
  *resource_version = resource_version_of(*object);
  return EventVerdict::Ok;
}

// The events of one piece are published together (one snapshot per piece, not per event).
void Informer::Sink::events_done() {
  if (!working_) return;
  publish(std::make_shared<const ObjectMap>(std::move(*working_)));
  working_.reset();
}

void Informer::Sink::publish(ObjectSnapshot next) {
  if (!on_change_) return;  // stopped
  objects_ = next;
  snapshot.store(next);
  on_change_(std::move(next));
}

void Informer::Sink::note_listed(std::size_t count, const std::string& version) {
  const auto now = Clock::now();
  if (last_list_log_ != Clock::time_point{} && now - last_list_log_ < kLogInterval) {
    YH_LOG(Debug) << "informer " << name_ << ": listed " << count << " objects";
    return;
  }
  last_list_log_ = now;
  YH_LOG(Info) << "informer " << name_ << ": listed " << count << " objects at resourceVersion "
               << version;
}

Informer::Informer(boost::asio::any_io_executor executor, InformerOptions options,
                   OnChange on_change)
    : sink_(std::make_shared<Sink>(options.name, std::move(on_change))),
      reflector_(std::make_unique<Reflector>(std::move(executor), std::move(options), sink_)) {}

Informer::~Informer() = default;

void Informer::start() { reflector_->start(); }
void Informer::stop() { reflector_->stop(); }
bool Informer::stopped() const { return reflector_->stopped(); }
bool Informer::synced() const { return reflector_->synced(); }
bool Informer::missing() const { return reflector_->missing(); }
ObjectSnapshot Informer::snapshot() const { return sink_->snapshot.load(); }

}  // namespace yurthub::net
