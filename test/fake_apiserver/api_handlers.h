// The fake apiserver's REST verbs on stored resources: get, list, create, update, patch, delete,
// deletecollection, plus the virtual selfsubjectreviews and pods/log. Each takes one parsed,
// authenticated request and returns a finished Reply (JSON object, list or Status); nothing here
// does I/O. Watches are served by watch.cc, exec by exec.cc. Single-threaded, like the Store.
// api_handlers.cc holds reads, create and delete; api_update.cc holds update and patch.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/request_path.h"
#include "test/fake_apiserver/resources.h"
#include "test/fake_apiserver/selectors.h"
#include "test/fake_apiserver/service_account_key.h"
#include "test/fake_apiserver/status.h"
#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

// One resource request, after routing and authentication.
struct ApiRequest {
  const ResourceInfo* resource = nullptr;
  ApiPath path;
  Query query;
  std::string body;
  std::string content_type;  // media type without parameters, lower case
  Identity user;
  std::string accept;  // the Accept header as sent
};

class ApiHandlers {
 public:
  explicit ApiHandlers(Store& store) : store_(store) {}

  // The key TokenRequest signs with (owned by the caller, outliving this); without one,
  // token_request answers 500.
  void set_service_account_key(const ServiceAccountKey* key) { service_account_key_ = key; }

  Reply get(const ApiRequest& req);
  Reply list(const ApiRequest& req);
  Reply create(const ApiRequest& req);
  Reply update(const ApiRequest& req);
  Reply patch(const ApiRequest& req);
  Reply remove(const ApiRequest& req);
  Reply remove_collection(const ApiRequest& req);
  Reply self_subject_review(const ApiRequest& req);
  // authorization.k8s.io/v1 SelfSubjectAccessReview: the spec echoed, status.allowed as given.
  Reply self_subject_access_review(const ApiRequest& req, bool allowed);
  // POST serviceaccounts/<name>/token (token_request.cc).
  Reply token_request(const ApiRequest& req);
  Reply pod_log(const ApiRequest& req);

  // Stores a new object (seed data, generated pods). `keep_meta`: keep a uid and
  // creationTimestamp the object already has. Returns the create reply (201 or a Status).
  Reply create_object(const ResourceInfo& resource, std::string_view version, const std::string& ns,
                      rapidjson::Document doc, bool keep_meta);

 private:
  // The update rules shared by PUT and PATCH: preconditions, status subresource, no-op
  // detection. `incoming` is the full new object (kind/apiVersion already stripped).
  Reply commit_update(const ApiRequest& req, const StoredObject& stored,
                      rapidjson::Document incoming);
  // certificatesigningrequests (csr_handlers.cc): a create stamps the caller into the spec and
  // is validated as the apiserver does; a write to the approval subresource changes only
  // status.conditions. `current` is the stored object, parsed.
  Reply create_csr(const ApiRequest& req, rapidjson::Document doc);
  Reply commit_csr_approval(const ApiRequest& req, const StoredObject& stored,
                            const rapidjson::Value& current, const rapidjson::Value& incoming);
  Reply full_object(const ApiRequest& req, unsigned code, const std::string& bare) const;
  Reply missing(const ApiRequest& req) const;

  Store& store_;
  const ServiceAccountKey* service_account_key_ = nullptr;
};

// `{"kind":"PodList","apiVersion":"v1","metadata":{...},"items":[...]}` from bare items; for a
// CRD, items carry kind/apiVersion and the top level is written in sorted key order, as the
// apiserver does for unstructured lists (nodepools-list.body).
// The request's labelSelector and fieldSelector, parsed and checked against its resource as the
// apiserver does for list, watch and deletecollection. A 400 Status if either is refused.
std::optional<Reply> parse_selectors(const ApiRequest& req, LabelSelector& labels,
                                     FieldSelector& fields);

std::string list_body(const ResourceInfo& resource, std::string_view version,
                      const ListResult& result);

}  // namespace yurthub::fake
