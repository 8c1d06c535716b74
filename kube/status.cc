// Failure -> HTTP code + Kubernetes Status; see status.h.
#include "kube/status.h"

#include <algorithm>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::kube {

ApiError api_error(Failure failure, std::string_view detail) {
  const std::string d(detail);
  switch (failure) {
    case Failure::BadRequest:
      return {400, "BadRequest", "malformed request: " + d};
    case Failure::HeaderTooLarge:
      return {431, "RequestHeaderFieldsTooLarge", "request header too large: " + d};
    case Failure::BodyTooLarge:
      return {413, "RequestEntityTooLarge", "request body too large: " + d};
    case Failure::TooManyRequests:
      return {429, "TooManyRequests",
              "too many requests in flight at the hub, please try again later: " + d};
    case Failure::FiltersNotReady:
      return {429, "TooManyRequests",
              "the hub's response filters are not ready yet, please try again later: " + d};
    case Failure::NoHealthyServer:
      return {503, "ServiceUnavailable", "the node is offline (no apiserver is reachable): " + d};
    case Failure::UpstreamUnreachable:
      return {503, "ServiceUnavailable", "unable to reach the apiserver: " + d};
    case Failure::UpstreamClosed:
      return {503, "ServiceUnavailable",
              "the apiserver closed the connection before its answer was complete: " + d};
    case Failure::UpstreamTimeout:
      return {504, "Timeout", "the apiserver did not answer in time: " + d};
    case Failure::BadUpstreamResponse:
      return {502, "InternalError", "the apiserver sent a response the hub could not read: " + d};
    case Failure::ShuttingDown:
      return {503, "ServiceUnavailable", "the hub is shutting down: " + d};
    case Failure::Unauthorized:
      return {401, "Unauthorized", "Unauthorized: " + d};
    case Failure::NotFound:
      return {404, "NotFound",
              d};  // the caller words it as the apiserver would: pods "x" not found
    case Failure::Expired:
      return {410, "Expired", d};
    case Failure::Offline:
      return {503, "ServiceUnavailable", "the node is offline (no apiserver is reachable): " + d};
    case Failure::NotAcceptable:  // as the apiserver's negotiation error words it
      return {406, "NotAcceptable", "only the following media types are accepted: " + d};
    case Failure::Conflict:
      return {409, "Conflict", d};
    case Failure::Invalid:
      return {422, "Invalid", d};
    case Failure::UnsupportedMediaType:
      return {415, "UnsupportedMediaType", d};
    case Failure::JournalFull:
      return {503, "ServiceUnavailable",
              "the node is offline and its write journal is full, please try again later: " + d};
    case Failure::ReplayPending:
      return {503, "ServiceUnavailable",
              "writes made while the node was offline are still being replayed, please try "
              "again later: " +
                  d};
    case Failure::Forbidden:
      return {403, "Forbidden", d};
    case Failure::NotFitToLead:
      return {503, "ServiceUnavailable", "this hub cannot feed its pool now: " + d};
  }
  return {500, "InternalError", d};
}

namespace {

// GroupResource.String(): "pods", "leases.coordination.k8s.io".
std::string group_resource(const StatusDetails& object) {
  return object.group.empty() ? object.kind : object.kind + "." + object.group;
}

std::string named(const StatusDetails& object) {
  return object.name.empty() ? group_resource(object)
                             : group_resource(object) + " \"" + object.name + "\"";
}

void write_string(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

ApiError forbidden_error(const StatusDetails& object, std::string_view why) {
  return {403, "Forbidden", named(object) + " is forbidden: " + std::string(why), object};
}

ApiError already_exists_error(const StatusDetails& object) {
  return {409, "AlreadyExists", named(object) + " already exists", object};
}

ApiError not_found_error(const StatusDetails& object) {
  return {404, "NotFound", named(object) + " not found", object};
}

ApiError bad_request_error(std::string message) { return {400, "BadRequest", std::move(message)}; }

ApiError invalid_error(std::string_view group, std::string_view kind, std::string_view name,
                       std::vector<StatusCause> causes) {
  std::string qualified(kind);
  if (!group.empty()) qualified.append(".").append(group);
  // field.ErrorList.ToAggregate: each distinct error once, in order; several in brackets.
  std::vector<std::string> rendered;
  for (const StatusCause& cause : causes) {
    std::string text = cause.field + ": " + cause.message;
    if (std::find(rendered.begin(), rendered.end(), text) == rendered.end())
      rendered.push_back(std::move(text));
  }
  std::string all;
  for (const std::string& text : rendered) all += (all.empty() ? "" : ", ") + text;
  if (rendered.size() > 1) all = "[" + all + "]";
  ApiError error{422, "Invalid", qualified + " \"" + std::string(name) + "\" is invalid: " + all};
  error.details = {std::string(name), std::string(group), std::string(kind), std::move(causes)};
  return error;
}

std::string watch_error_event(const ApiError& error) {
  return R"({"type":"ERROR","object":)" + status_body(error) + "}\n";
}

std::string status_body(const ApiError& error) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("kind");
  w.String("Status");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("status");
  w.String("Failure");
  w.Key("message");
  w.String(error.message.data(), static_cast<rapidjson::SizeType>(error.message.size()));
  w.Key("reason");
  w.String(error.reason.data(), static_cast<rapidjson::SizeType>(error.reason.size()));
  const StatusDetails& d = error.details;
  if (!d.name.empty() || !d.group.empty() || !d.kind.empty() || !d.causes.empty()) {
    // The apiserver's field order: name, group, kind.
    w.Key("details");
    w.StartObject();
    if (!d.name.empty()) {
      w.Key("name");
      write_string(w, d.name);
    }
    if (!d.group.empty()) {
      w.Key("group");
      write_string(w, d.group);
    }
    if (!d.kind.empty()) {
      w.Key("kind");
      write_string(w, d.kind);
    }
    if (!d.causes.empty()) {
      w.Key("causes");
      w.StartArray();
      for (const StatusCause& cause : d.causes) {
        w.StartObject();  // metav1.StatusCause's order: reason, message, field
        w.Key("reason");
        write_string(w, cause.reason);
        w.Key("message");
        write_string(w, cause.message);
        w.Key("field");
        write_string(w, cause.field);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.Key("code");
  w.Uint(error.code);
  w.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

const char* failure_label(Failure failure) {
  switch (failure) {
    case Failure::BadRequest:
      return "bad_request";
    case Failure::HeaderTooLarge:
      return "header_too_large";
    case Failure::BodyTooLarge:
      return "body_too_large";
    case Failure::TooManyRequests:
      return "too_many_requests";
    case Failure::FiltersNotReady:
      return "filters_not_ready";
    case Failure::NoHealthyServer:
      return "no_healthy_server";
    case Failure::UpstreamUnreachable:
      return "upstream_unreachable";
    case Failure::UpstreamClosed:
      return "upstream_closed";
    case Failure::UpstreamTimeout:
      return "upstream_timeout";
    case Failure::BadUpstreamResponse:
      return "bad_upstream_response";
    case Failure::ShuttingDown:
      return "shutting_down";
    case Failure::Unauthorized:
      return "unauthorized";
    case Failure::NotFound:
      return "not_found";
    case Failure::Expired:
      return "expired";
    case Failure::Offline:
      return "offline";
    case Failure::NotAcceptable:
      return "not_acceptable";
    case Failure::Conflict:
      return "conflict";
    case Failure::Invalid:
      return "invalid";
    case Failure::UnsupportedMediaType:
      return "unsupported_media_type";
    case Failure::JournalFull:
      return "journal_full";
    case Failure::ReplayPending:
      return "replay_pending";
    case Failure::Forbidden:
      return "forbidden";
    case Failure::NotFitToLead:
      return "not_fit_to_lead";
  }
  return "unknown";
}

}  // namespace yurthub::kube
