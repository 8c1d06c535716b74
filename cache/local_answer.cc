// Answers made on the node; see local_answer.h.
#include "cache/local_answer.h"

#include <random>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/clock.h"
#include "kube/field_labels.h"
#include "kube/selector.h"

namespace yurthub::cache {
namespace asio = boost::asio;

namespace {

std::chrono::steady_clock::duration random_between(std::chrono::seconds low,
                                                   std::chrono::seconds high) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<std::int64_t> dist(low.count() * 1000, high.count() * 1000);
  return std::chrono::milliseconds(dist(rng));
}

}  // namespace

std::string quoted(std::string_view s) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(out.GetString(), out.GetSize());
}

asio::awaitable<unsigned> send_json(hub::ResponseWriter& out, unsigned code, std::string body) {
  // Not `if (!co_await ...)` as the coroutine's first statement: g++ 12 miscompiles that shape
  // (the frame is resumed in a state it never reached: SIGILL or a garbage reference).
  const bool started = co_await out.start(code, "application/json");
  if (!started) co_return 0;
  co_await out.write(body);
  co_await out.finish();
  co_return code;
}

asio::awaitable<unsigned> send_api_error(hub::ResponseWriter& out, kube::Failure failure,
                                         const std::string& detail) {
  return send_status(out, kube::api_error(failure, detail));
}

asio::awaitable<unsigned> send_status(hub::ResponseWriter& out, const kube::ApiError& error) {
  return send_json(out, error.code, kube::status_body(error));
}

std::optional<std::string> invalid_selector(const kube::RequestInfo& info) {
  // The parse errors without the selector parser's own prefix: the apiserver says only why.
  auto why = [](const Error& error, std::string_view prefix) {
    std::string_view message = error.message;
    if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
    return std::string(message);
  };
  auto label = kube::LabelSelector::parse(info.label_selector);
  if (!label) {
    return why(label.error(), "invalid label selector \"" + info.label_selector + "\": ");
  }
  auto field = kube::FieldSelector::parse(info.field_selector);
  if (!field) {
    return why(field.error(), "invalid field selector \"" + info.field_selector + "\": ");
  }
  return kube::unsupported_field_label(info.api_group, info.resource, *field);
}

std::string list_head(std::string_view list_kind, std::string_view api_version,
                      std::uint64_t resource_version, std::string_view continue_token) {
  std::string head =
      "{\"kind\":" + quoted(list_kind.empty() ? "List" : list_kind) +
      ",\"apiVersion\":" + quoted(api_version) +
      ",\"metadata\":{\"resourceVersion\":" + quoted(std::to_string(resource_version));
  if (!continue_token.empty()) head += ",\"continue\":" + quoted(continue_token);
  head += "},\"items\":[";
  return head;
}

std::chrono::steady_clock::time_point watch_deadline(const kube::RequestInfo& info,
                                                     std::chrono::seconds min_request_timeout) {
  return base::Clock::now() +
         (info.timeout_seconds && *info.timeout_seconds > 0
              ? std::chrono::steady_clock::duration(std::chrono::seconds(*info.timeout_seconds))
              : random_between(min_request_timeout, 2 * min_request_timeout));
}

std::string bookmark_event(std::string_view kind, std::string_view api_version,
                           std::uint64_t resource_version) {
  return "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":" + quoted(kind) +
         ",\"apiVersion\":" + quoted(api_version) +
         ",\"metadata\":{\"resourceVersion\":" + quoted(std::to_string(resource_version)) + "}}}\n";
}

}  // namespace yurthub::cache
