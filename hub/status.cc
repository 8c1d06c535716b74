// Failure -> HTTP code + Kubernetes Status; see status.h.
#include "hub/status.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::hub {

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
      return {429, "TooManyRequests", "too many requests in flight at the hub, please try again later: " + d};
    case Failure::FiltersNotReady:
      return {429, "TooManyRequests", "the hub's response filters are not ready yet, please try again later: " + d};
    case Failure::NoHealthyServer:
      return {503, "ServiceUnavailable", "the node is offline (no apiserver is reachable): " + d};
    case Failure::UpstreamUnreachable:
      return {503, "ServiceUnavailable", "unable to reach the apiserver: " + d};
    case Failure::UpstreamClosed:
      return {503, "ServiceUnavailable", "the apiserver closed the connection before answering: " + d};
    case Failure::UpstreamTimeout:
      return {504, "Timeout", "the apiserver did not answer in time: " + d};
    case Failure::BadUpstreamResponse:
      return {502, "InternalError", "the apiserver sent a response the hub could not read: " + d};
    case Failure::ShuttingDown:
      return {503, "ServiceUnavailable", "the hub is shutting down: " + d};
    case Failure::Unauthorized:
      return {401, "Unauthorized", "Unauthorized: " + d};
    case Failure::NotFound:
      return {404, "NotFound", d};  // the caller words it as the apiserver would: pods "x" not found
    case Failure::Expired:
      return {410, "Expired", d};
    case Failure::Offline:
      return {503, "ServiceUnavailable", "the node is offline (no apiserver is reachable): " + d};
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
              "again later: " + d};
  }
  return {500, "InternalError", d};
}

std::string status_body(const ApiError& error) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("kind"); w.String("Status");
  w.Key("apiVersion"); w.String("v1");
  w.Key("metadata"); w.StartObject(); w.EndObject();
  w.Key("status"); w.String("Failure");
  w.Key("message"); w.String(error.message.data(), static_cast<rapidjson::SizeType>(error.message.size()));
  w.Key("reason"); w.String(error.reason.data(), static_cast<rapidjson::SizeType>(error.reason.size()));
  w.Key("code"); w.Uint(error.code);
  w.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

const char* failure_label(Failure failure) {
  switch (failure) {
    case Failure::BadRequest: return "bad_request";
    case Failure::HeaderTooLarge: return "header_too_large";
    case Failure::BodyTooLarge: return "body_too_large";
    case Failure::TooManyRequests: return "too_many_requests";
    case Failure::FiltersNotReady: return "filters_not_ready";
    case Failure::NoHealthyServer: return "no_healthy_server";
    case Failure::UpstreamUnreachable: return "upstream_unreachable";
    case Failure::UpstreamClosed: return "upstream_closed";
    case Failure::UpstreamTimeout: return "upstream_timeout";
    case Failure::BadUpstreamResponse: return "bad_upstream_response";
    case Failure::ShuttingDown: return "shutting_down";
    case Failure::Unauthorized: return "unauthorized";
    case Failure::NotFound: return "not_found";
    case Failure::Expired: return "expired";
    case Failure::Offline: return "offline";
    case Failure::Conflict: return "conflict";
    case Failure::Invalid: return "invalid";
    case Failure::UnsupportedMediaType: return "unsupported_media_type";
    case Failure::JournalFull: return "journal_full";
    case Failure::ReplayPending: return "replay_pending";
  }
  return "unknown";
}

}  // namespace yurthub::hub
