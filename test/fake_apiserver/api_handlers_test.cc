// Unit tests for the fake apiserver's REST verbs (api_handlers.h) and seed loading: what a client
// sees for create/get/update/patch/delete/list, including the Status errors, the status
// subresource split, no-op updates and list body formats.
#include "test/fake_apiserver/api_handlers.h"

#include <gtest/gtest.h>

#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/seed.h"

namespace yurthub::fake {
namespace {

class ApiHandlersTest : public ::testing::Test {
 protected:
  ApiRequest request(const std::string& resource, const std::string& ns, const std::string& name,
                     const std::string& sub = "", const std::string& body = "",
                     const std::string& version = "v1", const std::string& group = "") {
    ApiRequest req;
    req.resource = find_resource(group, version, resource);
    req.path.group = group;
    req.path.version = version;
    req.path.resource = resource;
    req.path.ns = ns;
    req.path.name = name;
    req.path.subresource = sub;
    req.body = body;
    return req;
  }
  Reply create_pod(const std::string& name, const std::string& extra = "") {
    return api_.create(request("pods", "default", "", "",
                               R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                                   R"("},"spec":{"nodeName":"n1"})" + extra + "}"));
  }
  rapidjson::Document body(const Reply& r) { return parse_json(r.body).value(); }

  Store store_{100};
  ApiHandlers api_{store_};
};

TEST_F(ApiHandlersTest, CreateAssignsIdentityAndGetReturnsTypedObject) {
  Reply created = create_pod("web-0");
  ASSERT_EQ(created.status, 201u) << created.body;
  auto doc = body(created);
  EXPECT_EQ(meta_string(doc, "namespace"), "default");
  EXPECT_EQ(meta_string(doc, "uid").size(), 36u);
  EXPECT_EQ(meta_string(doc, "resourceVersion"), "101");
  EXPECT_EQ(meta_string(doc, "creationTimestamp").size(), 20u);
  EXPECT_TRUE(created.body.starts_with(R"({"kind":"Pod","apiVersion":"v1","metadata":{)"));
  Reply got = api_.get(request("pods", "default", "web-0"));
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.body, created.body);
  EXPECT_EQ(create_pod("web-0").status, 409u);
  EXPECT_EQ(api_.get(request("pods", "default", "nope")).status, 404u);
}

TEST_F(ApiHandlersTest, GenerateNameAndBadBodies) {
  Reply r = api_.create(
      request("configmaps", "default", "", "", R"({"metadata":{"generateName":"cm-"}})"));
  ASSERT_EQ(r.status, 201u);
  std::string name = meta_string(body(r), "name");
  EXPECT_TRUE(name.starts_with("cm-"));
  EXPECT_EQ(name.size(), 8u);
  EXPECT_EQ(api_.create(request("configmaps", "default", "", "", "[1]")).status, 400u);
  EXPECT_EQ(api_.create(request("configmaps", "default", "", "", "{}")).status, 422u);
}

TEST_F(ApiHandlersTest, UpdateChecksResourceVersionAndKeepsStatus) {
  create_pod("web-0", R"(,"status":{"phase":"Running"})");
  std::string stale = R"({"metadata":{"name":"web-0","resourceVersion":"1"},"spec":{}})";
  Reply conflict = api_.update(request("pods", "default", "web-0", "", stale));
  EXPECT_EQ(conflict.status, 409u);
  EXPECT_NE(conflict.body.find("the object has been modified"), std::string::npos);
  std::string fresh = R"({"metadata":{"name":"web-0","resourceVersion":"101","labels":{"a":"b"}},)"
                      R"("spec":{"nodeName":"n2"},"status":{"phase":"Failed"}})";
  Reply ok = api_.update(request("pods", "default", "web-0", "", fresh));
  ASSERT_EQ(ok.status, 200u) << ok.body;
  auto doc = body(ok);
  EXPECT_STREQ(doc["status"]["phase"].GetString(), "Running");  // main resource keeps status
  EXPECT_STREQ(doc["spec"]["nodeName"].GetString(), "n2");
  EXPECT_EQ(meta_string(doc, "resourceVersion"), "102");
  EXPECT_EQ(api_.update(request("pods", "default", "nope", "", fresh)).status, 404u);
}

TEST_F(ApiHandlersTest, StatusSubresourceChangesOnlyStatus) {
  create_pod("web-0", R"(,"status":{"phase":"Pending"})");
  ApiRequest req = request("pods", "default", "web-0", "status",
                           R"({"spec":{"nodeName":"other"},"status":{"phase":"Running"}})");
  req.content_type = "application/merge-patch+json";
  Reply r = api_.patch(req);
  ASSERT_EQ(r.status, 200u) << r.body;
  auto doc = body(r);
  EXPECT_STREQ(doc["status"]["phase"].GetString(), "Running");
  EXPECT_STREQ(doc["spec"]["nodeName"].GetString(), "n1");
}

TEST_F(ApiHandlersTest, PatchTypesAndErrors) {
  create_pod("web-0");
  ApiRequest json = request("pods", "default", "web-0", "",
                            R"([{"op":"add","path":"/metadata/labels","value":{"x":"y"}}])");
  json.content_type = "application/json-patch+json";
  Reply r = api_.patch(json);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_STREQ(body(r)["metadata"]["labels"]["x"].GetString(), "y");

  // Strategic merge patch directives are applied, not stored.
  ApiRequest smp = request(
      "pods", "default", "web-0", "",
      R"({"spec":{"nodeName":"n2","hostname":null,"$retainKeys":["nodeName","hostname"]}})");
  smp.content_type = "application/strategic-merge-patch+json";
  r = api_.patch(smp);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body.find("$retainKeys"), std::string::npos);
  EXPECT_EQ(to_json(body(r)["spec"]), R"({"nodeName":"n2"})");
  // An unknown $patch is strategicpatch's plain error, which the apiserver answers with a 500.
  smp.body = R"({"metadata":{"labels":{"z":"1","$patch":"merge"}}})";
  r = api_.patch(smp);
  EXPECT_EQ(r.status, 500u);
  EXPECT_EQ(r.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"unknown patch type: merge in map: map[$patch:merge z:1]","code":500})");
  // A JSON patch that does not apply: 422, without the patch library's words.
  json.body = R"([{"op":"test","path":"/metadata/labels/x","value":"nope"}])";
  r = api_.patch(json);
  EXPECT_EQ(r.status, 422u);
  EXPECT_EQ(r.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("the server rejected our request due to an error in our request",)"
            R"("reason":"Invalid","details":{},"code":422})");
  // Custom resources take no strategic merge patch.
  ApiRequest crd = request("nodepools", "", "pool-a", "", "{}", "v1beta1", "apps.openyurt.io");
  crd.content_type = "application/strategic-merge-patch+json";
  EXPECT_EQ(api_.patch(crd).status, 415u);

  ApiRequest apply = request("pods", "default", "web-0", "", "{}");
  apply.content_type = "application/apply-patch+yaml";
  EXPECT_EQ(api_.patch(apply).status, 415u);
  ApiRequest missing = request("pods", "default", "nope", "", "{}");
  missing.content_type = "application/merge-patch+json";
  EXPECT_EQ(api_.patch(missing).status, 404u);
}

TEST_F(ApiHandlersTest, NoOpPatchDoesNotBumpResourceVersion) {
  create_pod("web-0");
  ApiRequest req = request("pods", "default", "web-0", "", R"({"spec":{"nodeName":"n1"}})");
  req.content_type = "application/merge-patch+json";
  Reply r = api_.patch(req);
  EXPECT_EQ(meta_string(body(r), "resourceVersion"), "101");
  EXPECT_EQ(store_.current_rv(), 101u);
}

TEST_F(ApiHandlersTest, DeleteReturnsTheObjectAtANewVersion) {
  create_pod("web-0");
  Reply r = api_.remove(request("pods", "default", "web-0"));
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(meta_string(body(r), "resourceVersion"), "102");
  EXPECT_EQ(api_.remove(request("pods", "default", "web-0")).status, 404u);
}

TEST_F(ApiHandlersTest, ListBodyFormats) {
  create_pod("a");
  create_pod("b");
  ApiRequest req = request("pods", "default", "");
  req.query = Query::parse("limit=1");
  Reply page = api_.list(req);
  EXPECT_TRUE(page.body.starts_with(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"102","continue":")"));
  EXPECT_NE(page.body.find(R"(,"remainingItemCount":1},"items":[{"metadata":)"), std::string::npos);
  req.query = Query::parse("resourceVersion=0&limit=1");  // served from the "watch cache"
  EXPECT_EQ(body(api_.list(req))["items"].Size(), 2u);
  req.query = Query::parse("labelSelector=%3D%3D%3D");
  EXPECT_EQ(api_.list(req).status, 400u);
  req.query = Query::parse("fieldSelector=metadata.name%3Db");
  EXPECT_EQ(body(api_.list(req))["items"].Size(), 1u);
}

TEST_F(ApiHandlersTest, CrdListsKeepItemTypeMetaAndServeBothVersions) {
  auto seeded =
      load_seed_text(api_, R"([{"apiVersion":"apps.openyurt.io/v1beta1","kind":"NodePool",)"
                           R"("metadata":{"name":"pool-a"},"spec":{"type":"Edge"}}])");
  ASSERT_TRUE(seeded) << seeded.error().message;
  Reply v1 = api_.list(request("nodepools", "", "", "", "", "v1beta1", "apps.openyurt.io"));
  EXPECT_TRUE(v1.body.starts_with(
      R"({"apiVersion":"apps.openyurt.io/v1beta1","items":[{"kind":"NodePool",)"
      R"("apiVersion":"apps.openyurt.io/v1beta1","metadata":{"name":"pool-a")"));
  EXPECT_TRUE(v1.body.ends_with(
      R"(],"kind":"NodePoolList","metadata":{"continue":"","resourceVersion":"101"}})"));
  Reply v2 = api_.get(request("nodepools", "", "pool-a", "", "", "v1beta2", "apps.openyurt.io"));
  EXPECT_TRUE(v2.body.starts_with(R"({"kind":"NodePool","apiVersion":"apps.openyurt.io/v1beta2")"));
}

TEST_F(ApiHandlersTest, SeedErrorsNameTheItem) {
  auto r = load_seed_text(api_, R"({"kind":"List","items":[{"apiVersion":"v1","kind":"Bogus"}]})");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("item 0"), std::string::npos);
  EXPECT_FALSE(load_seed_text(api_, "{"));
}

TEST_F(ApiHandlersTest, SelfSubjectReviewAddsAuthenticatedGroup) {
  ApiRequest req = request("selfsubjectreviews", "", "", "", "{}", "v1", "authentication.k8s.io");
  req.user = Identity{"alice", "", {"devs"}};
  Reply r = api_.self_subject_review(req);
  EXPECT_EQ(r.status, 201u);
  EXPECT_EQ(r.body,
            R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":)"
            R"({"creationTimestamp":null},"status":{"userInfo":{"username":"alice","groups":)"
            R"(["devs","system:authenticated"]}}})");
}

TEST_F(ApiHandlersTest, GeneratedPodsArePaddedToSize) {
  auto n = generate_pods(api_, 3, 2000, "edge-node-9");
  ASSERT_TRUE(n) << n.error().message;
  ApiRequest req = request("pods", "bulk", "");
  req.query = Query::parse("fieldSelector=spec.nodeName%3Dedge-node-9");
  Reply r = api_.list(req);
  auto doc = body(r);
  ASSERT_EQ(doc["items"].Size(), 3u);
  std::string item = to_json(doc["items"][0]);
  EXPECT_GT(item.size(), 1900u);
  EXPECT_LT(item.size(), 2100u);
  EXPECT_NE(api_.get(request("namespaces", "", "bulk")).status, 404u);
}

}  // namespace
}  // namespace yurthub::fake
