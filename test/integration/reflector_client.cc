// client-go's Reflector loop, request for request; see reflector_client.h.
#include "test/integration/reflector_client.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/base/json_test_support.h"

namespace yurthub::test {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(20);

std::string member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

std::string to_json(const rapidjson::Value& value) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  value.Accept(w);
  return out.GetString();
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// The status code of an ERROR event's Status (0 when it has none).
int error_code(const rapidjson::Value& status) {
  if (!status.IsObject()) return 0;
  auto it = status.FindMember("code");
  return it != status.MemberEnd() && it->value.IsInt() ? it->value.GetInt() : 0;
}

}  // namespace

ReflectorClient::ReflectorClient(ReflectorOptions options) : options_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

ReflectorClient::~ReflectorClient() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (current_) current_->close();
  }
  changed_.notify_all();
  thread_.join();
}

bool ReflectorClient::wait_synced(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [this] { return syncs_ > 0; });
}

bool ReflectorClient::wait_for(
    const std::function<bool(const std::map<std::string, std::string>&)>& done,
    std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return syncs_ > 0 && done(store_); });
}

std::map<std::string, std::string> ReflectorClient::objects() const {
  std::lock_guard lock(mutex_);
  return store_;
}
std::string ReflectorClient::resource_version() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}
std::string ReflectorClient::synced_by() const {
  std::lock_guard lock(mutex_);
  return synced_by_;
}
std::vector<std::string> ReflectorClient::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}
std::vector<int> ReflectorClient::statuses() const {
  std::lock_guard lock(mutex_);
  return statuses_;
}
int ReflectorClient::syncs() const {
  std::lock_guard lock(mutex_);
  return syncs_;
}

void ReflectorClient::record(const std::string& target, int status) {
  std::lock_guard lock(mutex_);
  requests_.push_back(target);
  statuses_.push_back(status);
}

bool ReflectorClient::sleep_unless_stopped(std::chrono::milliseconds how_long) {
  std::unique_lock lock(mutex_);
  return !changed_.wait_for(lock, how_long, [this] { return stopping_; });
}

std::string ReflectorClient::selectors() const {
  std::string query;
  if (!options_.field_selector.empty()) query += "fieldSelector=" + options_.field_selector + "&";
  if (!options_.label_selector.empty()) query += "labelSelector=" + options_.label_selector + "&";
  return query;
}

void ReflectorClient::run() {
  // RunWithContext: ListAndWatch rounds, a backoff between them.
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    list_and_watch();
    if (!sleep_unless_stopped(options_.backoff)) return;
  }
}

std::shared_ptr<WatchStream> ReflectorClient::open(const std::string& target) {
  Headers headers = {{"User-Agent", options_.user_agent}, {"Accept", options_.accept}};
  if (!options_.bearer_token.empty())
    headers.emplace_back("Authorization", "Bearer " + options_.bearer_token);
  auto stream = std::make_shared<WatchStream>(options_.port, options_.path + "?" + target, headers);
  std::lock_guard lock(mutex_);
  if (stopping_) stream->close();
  current_ = stream;
  return stream;
}

void ReflectorClient::list_and_watch() {
  std::shared_ptr<WatchStream> stream;
  std::size_t consumed = 0;
  bool fallback = options_.shape == ClientShape::ListWatch;
  if (!fallback && !watch_list(stream, consumed, fallback) && !fallback) return;
  if (fallback) {
    stream.reset();  // the error answer's
    if (!list()) return;
  }
  watch(std::move(stream), consumed);
}

bool ReflectorClient::watch_list(std::shared_ptr<WatchStream>& stream, std::size_t& consumed,
                                 bool& fallback) {
  for (;;) {
    std::string rv;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return false;
      rv = resource_version_;
    }
    // reflector.go watchList: keys in url.Values' order (sorted); no resourceVersion on the
    // first sync; timeout= as the typed client adds it.
    std::string target = "allowWatchBookmarks=true&" + selectors();
    if (!rv.empty()) target += "resourceVersion=" + rv + "&";
    target += "resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=" +
              std::to_string(options_.timeout_seconds) +
              "s&timeoutSeconds=" + std::to_string(options_.timeout_seconds) + "&watch=true";
    stream = open(target);
    stream->wait_for_header(std::chrono::seconds(30));
    const int status = stream->status();
    record(target, status);
    // No connection, or 429: backoff, then the round again (isWatchErrorRetriable).
    if (status == 0 || status == 429) return false;
    if (status != 200) {
      fallback = true;  // any other error: a list for this round
      return false;
    }
    std::map<std::string, std::string> temporary;
    std::string synced_rv;
    const auto opened = std::chrono::steady_clock::now();
    consumed = 0;
    for (;;) {
      if (stream->wait_for_events(consumed + 1, kPoll)) {
        const std::string line = stream->events()[consumed++];
        if (blank(line)) continue;  // whitespace between events, which client-go's decoder skips
        bool end = false;
        const std::string type = apply(line, temporary, synced_rv, end);
        if (type == "ERROR") {
          auto doc = test_support::parse_json(line);
          const int code = error_code(doc["object"]);
          if (code == 410 || code == 504) {  // Expired, TooLarge: again at once, from ""
            std::lock_guard lock(mutex_);
            resource_version_.clear();
            break;
          }
          fallback = true;
          return false;
        }
        if (type.empty()) {  // a decode error: ClientWatchDecoding, an error like any other
          fallback = true;
          return false;
        }
        if (end) {
          std::lock_guard lock(mutex_);
          store_ = std::move(temporary);
          resource_version_ = synced_rv;
          synced_by_ = "watch-list";
          ++syncs_;
          changed_.notify_all();
          return true;
        }
        continue;
      }
      if (!stream->ended()) {
        std::lock_guard lock(mutex_);
        if (stopping_) return false;
        continue;
      }
      // Closed before the bookmark: within a second with nothing in it, a VeryShortWatchError
      // (an error: a list); otherwise the same streaming list again, at once.
      if (consumed == 0 && std::chrono::steady_clock::now() - opened < std::chrono::seconds(1)) {
        fallback = true;
        return false;
      }
      break;
    }
  }
}

bool ReflectorClient::list() {
  std::string rv;
  {
    std::lock_guard lock(mutex_);
    rv = resource_version_;
  }
  // relistResourceVersion: "0" the first time, else the last; the pager's limit=500 only when
  // the resourceVersion is "0" (or "").
  const std::string list_rv = rv.empty() ? "0" : rv;
  std::string target = selectors();
  if (list_rv == "0") target += "limit=500&";
  target += "resourceVersion=" + list_rv;
  Headers headers = {{"User-Agent", options_.user_agent}, {"Accept", options_.accept}};
  if (!options_.bearer_token.empty())
    headers.emplace_back("Authorization", "Bearer " + options_.bearer_token);
  const HttpResponse answer = http_request(options_.port, "GET", options_.path + "?" + target,
                                           headers, "", std::chrono::seconds(30));
  record(target, answer.status);
  if (answer.status != 200) return false;
  auto doc = test_support::parse_json(answer.body);
  if (!doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray()) return false;
  std::map<std::string, std::string> listed;
  for (const auto& item : doc["items"].GetArray()) {
    const auto& meta = item["metadata"];
    const std::string ns = member(meta, "namespace");
    listed[(ns.empty() ? "" : ns + "/") + member(meta, "name")] = to_json(item);
  }
  std::lock_guard lock(mutex_);
  store_ = std::move(listed);
  resource_version_ = member(doc["metadata"], "resourceVersion");
  synced_by_ = "list";
  ++syncs_;
  changed_.notify_all();
  return true;
}

void ReflectorClient::watch(std::shared_ptr<WatchStream> stream, std::size_t consumed) {
  for (;;) {
    std::string rv;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      rv = resource_version_;
    }
    if (!stream) {
      // reflector.go watch: a plain watch from the last resourceVersion.
      const std::string target =
          "allowWatchBookmarks=true&" + selectors() + "resourceVersion=" + rv +
          "&timeout=" + std::to_string(options_.timeout_seconds) +
          "s&timeoutSeconds=" + std::to_string(options_.timeout_seconds) + "&watch=true";
      stream = open(target);
      stream->wait_for_header(std::chrono::seconds(30));
      record(target, stream->status());
      if (stream->status() != 200) return;  // an error: the round ends, a relist follows
      consumed = 0;
    }
    const auto opened = std::chrono::steady_clock::now();
    bool any = false;
    for (;;) {
      if (stream->wait_for_events(consumed + 1, kPoll)) {
        const std::string line = stream->events()[consumed++];
        if (blank(line)) continue;
        any = true;
        std::lock_guard lock(mutex_);
        bool end = false;
        std::string event_rv = resource_version_;
        const std::string type = apply(line, store_, event_rv, end);
        if (type == "ERROR" || type.empty()) return;  // 410 and the like: relist
        resource_version_ = event_rv;
        changed_.notify_all();
        continue;
      }
      if (!stream->ended()) {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
        continue;
      }
      break;
    }
    // A very short watch with nothing in it is an error (a relist); else watch again.
    if (!any && std::chrono::steady_clock::now() - opened < std::chrono::seconds(1)) return;
    stream.reset();
  }
}

std::string ReflectorClient::apply(const std::string& line,
                                   std::map<std::string, std::string>& store, std::string& rv,
                                   bool& end) {
  auto doc = test_support::parse_json(line);
  if (!doc.IsObject() || !doc.HasMember("type") || !doc["type"].IsString() ||
      !doc.HasMember("object")) {
    return "";
  }
  const std::string type = doc["type"].GetString();
  const auto& object = doc["object"];
  if (type == "ERROR") return type;
  if (!object.IsObject() || !object.HasMember("metadata")) return "";
  const auto& meta = object["metadata"];
  const std::string object_rv = member(meta, "resourceVersion");
  if (type == "BOOKMARK") {
    if (!object_rv.empty()) rv = object_rv;
    const auto annotations = meta.FindMember("annotations");
    end = annotations != meta.MemberEnd() &&
          member(annotations->value, "k8s.io/initial-events-end") == "true";
    return type;
  }
  const std::string ns = member(meta, "namespace");
  const std::string key = (ns.empty() ? "" : ns + "/") + member(meta, "name");
  if (type == "ADDED" || type == "MODIFIED")
    store[key] = to_json(object);
  else if (type == "DELETED")
    store.erase(key);
  else
    return "";
  if (!object_rv.empty()) rv = object_rv;
  return type;
}

}  // namespace yurthub::test
