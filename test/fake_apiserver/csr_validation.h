// The apiserver's rules for CertificateSigningRequests, as v1.26 applies them
// (pkg/registry/certificates/certificates/strategy.go, pkg/apis/certificates/validation): what a
// create stamps (spec.username, uid, groups from the caller, whatever the client sent; an empty
// status), what it refuses (422 field errors in the apiserver's words), and what a write to the
// approval subresource may change (status.conditions only, timestamps filled in). Also the
// condition helpers the fake's controllers (controllers.cc) use. Called by csr_handlers.cc.
// Pure; objects are stored JSON without kind/apiVersion.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/result.h"
#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/status.h"

namespace yurthub::fake {

inline constexpr std::string_view kCsrResourceKey =
    "certificates.k8s.io/certificatesigningrequests";

// Rewrites `csr` as the apiserver stores a new CSR: metadata as sent, spec with only its known
// fields (request, signerName, expirationSeconds, usages) plus username, uid and groups of `who`
// (system:authenticated added, as the authenticator does), status {}. REQUIRES: csr is an object.
void prepare_csr_create(rapidjson::Document& csr, const Identity& who);

// The field errors of a new CSR (after prepare_csr_create); empty if valid.
std::vector<FieldCause> validate_csr_create(const rapidjson::Value& csr);

// The approval subresource's update: `next` becomes `current` with status.conditions taken from
// `incoming`, each condition with lastUpdateTime and lastTransitionTime filled as the apiserver
// does (`now`, or the old transition time for an unchanged type/status). Returns the field errors
// that refuse the update (empty: apply `next`).
std::vector<FieldCause> prepare_csr_approval(rapidjson::Document& next,
                                             const rapidjson::Value& incoming,
                                             const rapidjson::Value& current, std::string_view now);

// The PEM text of spec.request (base64 in JSON). Errors say why it is not base64.
Result<std::string> csr_request_pem(const rapidjson::Value& csr);

// True if status.conditions has a condition of `type` (with status "True").
bool has_csr_condition(const rapidjson::Value& csr, std::string_view type);

// Appends {type, status:"True", reason, message, lastUpdateTime, lastTransitionTime} to
// status.conditions. REQUIRES: csr is an object.
void add_csr_condition(rapidjson::Document& csr, std::string_view type, std::string_view reason,
                       std::string_view message, std::string_view now);

// spec.<field> as a string ("" if absent); spec.usages as strings.
std::string csr_spec_string(const rapidjson::Value& csr, const char* field);
std::vector<std::string> csr_usages(const rapidjson::Value& csr);

}  // namespace yurthub::fake
