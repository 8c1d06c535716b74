// Status bodies; see status.h. Messages are the apiserver's own wording (k8s.io/apimachinery
// pkg/api/errors) so clients that match on them (kubectl, client-go retry logic) behave the same.
#include "test/fake_apiserver/status.h"

#include "test/fake_apiserver/json_patch.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::fake {
namespace {

void write_details(rapidjson::Writer<rapidjson::StringBuffer>& w, const StatusDetails& d) {
  w.Key("details");
  w.StartObject();
  if (!d.name.empty()) {
    w.Key("name");
    w.String(d.name);
  }
  if (!d.group.empty()) {
    w.Key("group");
    w.String(d.group);
  }
  if (!d.kind.empty()) {
    w.Key("kind");
    w.String(d.kind);
  }
  if (!d.causes.empty()) {
    w.Key("causes");
    w.StartArray();
    for (const auto& c : d.causes) {
      w.StartObject();
      w.Key("reason");
      w.String(c.reason);
      w.Key("message");
      w.String(c.message);
      w.Key("field");
      w.String(c.field);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

std::string quoted(std::string_view s) {
  std::string q = "\"";
  q += s;
  q += '"';
  return q;
}

}  // namespace

std::string status_body(unsigned code, std::string_view reason, std::string_view message,
                        const StatusDetails* details) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
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
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  if (!reason.empty()) {
    w.Key("reason");
    w.String(reason.data(), static_cast<rapidjson::SizeType>(reason.size()));
  }
  if (details != nullptr) write_details(w, *details);
  w.Key("code");
  w.Uint(code);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

Reply status_reply(unsigned code, std::string_view reason, std::string_view message,
                   const StatusDetails* details) {
  return Reply{code, "application/json", status_body(code, reason, message, details)};
}

Reply not_found(std::string_view qualified, std::string_view group, std::string_view resource,
                std::string_view name) {
  StatusDetails d{std::string(name), std::string(group), std::string(resource)};
  std::string msg = std::string(qualified) + " " + quoted(name) + " not found";
  return status_reply(404, "NotFound", msg, &d);
}

Reply path_not_found() {
  StatusDetails empty;
  return status_reply(404, "NotFound", "the server could not find the requested resource", &empty);
}

Reply already_exists(std::string_view qualified, std::string_view group, std::string_view resource,
                     std::string_view name) {
  StatusDetails d{std::string(name), std::string(group), std::string(resource)};
  std::string msg = std::string(qualified) + " " + quoted(name) + " already exists";
  return status_reply(409, "AlreadyExists", msg, &d);
}

Reply conflict(std::string_view qualified, std::string_view group, std::string_view resource,
               std::string_view name) {
  return conflict_message(qualified, group, resource, name,
                          "the object has been modified; please apply your changes to the "
                          "latest version and try again");
}

Reply conflict_message(std::string_view qualified, std::string_view group,
                       std::string_view resource, std::string_view name, std::string_view message) {
  StatusDetails d{std::string(name), std::string(group), std::string(resource)};
  std::string msg = "Operation cannot be fulfilled on " + std::string(qualified) + " " +
                    quoted(name) + ": " + std::string(message);
  return status_reply(409, "Conflict", msg, &d);
}

Reply bad_request(std::string_view message) { return status_reply(400, "BadRequest", message); }

Reply unauthorized() { return status_reply(401, "Unauthorized", "Unauthorized"); }

Reply forbidden(std::string_view user, std::string_view verb, std::string_view group,
                std::string_view resource, std::string_view ns, std::string_view name) {
  StatusDetails d{std::string(name), std::string(group), std::string(resource)};
  std::string msg = std::string(resource) + " ";
  if (!name.empty()) msg += quoted(name) + " ";
  msg += "is forbidden: User " + quoted(user) + " cannot " + std::string(verb) + " resource " +
         quoted(resource) + " in API group " + quoted(group);
  msg += ns.empty() ? " at the cluster scope" : " in the namespace " + quoted(ns);
  return status_reply(403, "Forbidden", msg, &d);
}

Reply forbidden_path(std::string_view user, std::string_view verb, std::string_view path) {
  StatusDetails d{};
  std::string msg =
      "forbidden: User " + quoted(user) + " cannot " + std::string(verb) + " path " + quoted(path);
  return status_reply(403, "Forbidden", msg, &d);
}

Reply invalid(std::string_view kind, std::string_view name, std::string_view message) {
  StatusDetails d{std::string(name), "", std::string(kind)};
  std::string msg = std::string(kind) + " " + quoted(name) + " is invalid: " + std::string(message);
  return status_reply(422, "Invalid", msg, &d);
}

Reply invalid_fields(std::string_view kind, std::string_view group, std::string_view name,
                     const std::vector<FieldCause>& causes) {
  std::string qualified(kind);
  if (!group.empty()) qualified += "." + std::string(group);
  std::string list;
  for (const auto& c : causes) {
    if (!list.empty()) list += ", ";
    list += c.field + ": " + c.message;
  }
  if (causes.size() > 1) list = "[" + list + "]";
  std::string message = qualified + " " + quoted(name) + " is invalid: " + list;
  StatusDetails details{std::string(name), std::string(group), std::string(kind), causes};
  return status_reply(422, "Invalid", message, &details);
}

Reply method_not_allowed(std::string_view message) {
  return status_reply(405, "MethodNotAllowed", message);
}

Reply unsupported_media_type(std::string_view content_type) {
  return status_reply(415, "UnsupportedMediaType",
                      "the body of the request was in an unknown format - accepted media types "
                      "include: application/json-patch+json, application/merge-patch+json, "
                      "application/strategic-merge-patch+json (got " +
                          std::string(content_type) + ")");
}

Reply entity_too_large() {
  return status_reply(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728");
}

Reply internal_error(std::string_view message) {
  return status_reply(500, "InternalError", message);
}

Reply patch_failed(const PatchError& error) {
  switch (error.failure) {
    case PatchFailure::BadRequest:
      return bad_request(error.message);
    case PatchFailure::Rejected: {
      StatusDetails empty;
      return status_reply(422, "Invalid",
                          "the server rejected our request due to an error in our request", &empty);
    }
    case PatchFailure::TooLarge:
      return status_reply(413, "RequestEntityTooLarge",
                          "Request entity too large: " + error.message);
    case PatchFailure::Unknown:
      break;
  }
  return status_reply(500, "", error.message);
}

std::string expired_status(std::uint64_t rv, std::uint64_t oldest) {
  std::string msg =
      "too old resource version: " + std::to_string(rv) + " (" + std::to_string(oldest) + ")";
  return status_body(410, "Expired", msg, nullptr);
}

Reply expired_reply(std::string_view message) { return status_reply(410, "Expired", message); }

}  // namespace yurthub::fake
