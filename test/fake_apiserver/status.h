// Kubernetes `Status` bodies, byte-compatible with a v1.26 apiserver (compact JSON, field order
// kind, apiVersion, metadata, status, message, reason, details, code; see status-*.body in
// test/testdata/fixtures/apiserver-v1.26). Every error the fake apiserver returns is built here;
// this is the one file that maps a failure to an HTTP code and a Status reason. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yurthub::fake {

// Response headers set over the defaults http_io.h writes (name, value).
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A finished, non-streaming HTTP answer.
struct Reply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  HeaderList headers{};  // e.g. a Cache-Control other than "no-cache, private"
};

// One field.Error of an Invalid Status: reason ("FieldValueInvalid", "FieldValueRequired",
// "FieldValueNotSupported", "FieldValueDuplicate", "FieldValueForbidden"), its message without
// the field ("Required value", "Invalid value: ...: why") and the field path.
struct FieldCause {
  std::string reason;
  std::string message;
  std::string field;
};

// What a Status's `details` names. Empty members are omitted, as the apiserver does.
struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;  // the plural resource name ("pods"), as the apiserver writes it
  std::vector<FieldCause> causes{};  // an Invalid Status's field errors
};

// The generic form: {"kind":"Status",...,"code":code}. `details` is written only if given.
std::string status_body(unsigned code, std::string_view reason, std::string_view message,
                        const StatusDetails* details);

Reply status_reply(unsigned code, std::string_view reason, std::string_view message,
                   const StatusDetails* details = nullptr);

// `pods "nope" not found` (reason NotFound, details name/group/kind). `qualified` is the resource
// as in "leases.coordination.k8s.io"; `resource` the plural name, `group` its API group.
Reply not_found(std::string_view qualified, std::string_view group, std::string_view resource,
                std::string_view name);
// `the server could not find the requested resource` with "details":{} (unknown paths).
Reply path_not_found();
Reply already_exists(std::string_view qualified, std::string_view group, std::string_view resource,
                     std::string_view name);
// `Operation cannot be fulfilled on nodes "x": the object has been modified; ...`.
Reply conflict(std::string_view qualified, std::string_view group, std::string_view resource,
               std::string_view name);
Reply conflict_message(std::string_view qualified, std::string_view group,
                       std::string_view resource, std::string_view name, std::string_view message);
Reply bad_request(std::string_view message);
Reply unauthorized();
// `secrets is forbidden: User "u" cannot list resource "secrets" in API group "" ...`.
Reply forbidden(std::string_view user, std::string_view verb, std::string_view group,
                std::string_view resource, std::string_view ns, std::string_view name);
// A non-resource URL refused by the authorizer: `forbidden: User "u" cannot get path "/p"`
// with "details":{}, as responsewriters.Forbidden writes it (the verb is the lower-case method).
Reply forbidden_path(std::string_view user, std::string_view verb, std::string_view path);
Reply invalid(std::string_view kind, std::string_view name, std::string_view message);
// 422 Invalid as NewInvalid builds it: `Kind.group "name" is invalid: field: message` (several
// causes in `[a, b]`), details with name, group, kind and causes. REQUIRES: causes not empty.
Reply invalid_fields(std::string_view kind, std::string_view group, std::string_view name,
                     const std::vector<FieldCause>& causes);
Reply method_not_allowed(std::string_view message);
Reply unsupported_media_type(std::string_view content_type);
Reply entity_too_large();
Reply internal_error(std::string_view message);

struct PatchError;
// The apiserver's answer to a PATCH whose patch did not apply (json_patch.h, strategic_patch.h):
// 400 BadRequest with the message; 422 Invalid "the server rejected our request due to an error
// in our request" with empty details (NewGenericServerResponse drops the patch library's words);
// 413 "Request entity too large: ..."; or the 500 without a reason that the apiserver gives for
// an error it does not convert (strategicpatch's), with the message as is.
Reply patch_failed(const PatchError& error);

// The Status object of a 410 watch ERROR event: `too old resource version: rv (oldest)`.
std::string expired_status(std::uint64_t rv, std::uint64_t oldest);
// A 410 Expired reply (a `continue` token from before the history window).
Reply expired_reply(std::string_view message);

}  // namespace yurthub::fake
