// admission/webhook (with pod_affinity, node_label_guard and admission_review under it): recorded
// AdmissionReview requests (test/testdata/admission/*.review.json, as kube-apiserver v1.26 posts
// them) answered as kube-apiserver reads the answer: the base64 JSON Patch is decoded and applied
// to the request's object, and the pod's affinity compared with what the scheduler must see.
#include "admission/webhook.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "admission/node_label_guard.h"
#include "base/base64.h"
#include "base/json_member.h"
#include "base/json_parse.h"
#include "kube/json_patch.h"

namespace yurthub::admission {
namespace {

const std::string kR =
    R"({"key":"nodepool.openyurt.io/hostnetwork","operator":"NotIn","values":["true"]})";
const std::string kZone =
    R"({"key":"topology.kubernetes.io/zone","operator":"In","values":["hangzhou"]})";
const std::string kField = R"({"key":"metadata.name","operator":"In","values":["edge-node-1"]})";

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/admission/" + name + ".review.json");
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

rapidjson::Document parse(std::string_view json) {
  rapidjson::Document doc;
  EXPECT_TRUE(base::parse_json(json, doc).ok()) << json;
  return doc;
}

const WebhookConfig kConfig{std::string(kDefaultLabellerUsername)};

// What kube-apiserver does with the answer: checks the uid, applies the patch (if any) to the
// request's object. Returns the object as admitted; `allowed` and `patched` say how.
struct Admitted {
  bool allowed = false;
  bool patched = false;
  rapidjson::Document object;
  std::string message;
};

Admitted admit(const std::string& path, const std::string& review_text) {
  Admitted out;
  const WebhookAnswer answer = answer_review(path, review_text, kConfig);
  EXPECT_EQ(answer.status, 200u) << answer.body;
  rapidjson::Document review = parse(review_text);
  rapidjson::Document reply = parse(answer.body);
  EXPECT_EQ(base::string_member(reply, "apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(base::string_member(reply, "kind"), "AdmissionReview");
  const rapidjson::Value& response = reply["response"];
  EXPECT_EQ(base::string_member(response, "uid"), base::string_member(review["request"], "uid"));
  out.allowed = response["allowed"].GetBool();
  out.object.CopyFrom(review["request"]["object"], out.object.GetAllocator());
  if (const rapidjson::Value* status = base::find_member(response, "status")) {
    out.message = base::string_member(*status, "message");
  }
  if (response.HasMember("patch")) {
    EXPECT_EQ(base::string_member(response, "patchType"), "JSONPatch");
    auto patch_text = base::decode_base64(base::string_member(response, "patch"));
    EXPECT_TRUE(patch_text.ok());
    rapidjson::Document patch = parse(*patch_text);
    EXPECT_TRUE(kube::apply_json_patch(out.object, patch).ok()) << *patch_text;
    out.patched = true;
  }
  return out;
}

// The review of `object` as a CREATE (for running the webhook again on what it admitted).
std::string review_of(const rapidjson::Value& object) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2",)"
         R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","object":)" +
         base::to_json(object) + "}}";
}

TEST(MutatePods, RecordedReviews) {
  struct Case {
    std::string fixture;
    std::string affinity;  // spec.affinity as admitted; "" when the pod must come out unchanged
  };
  const std::string required =
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)";
  const Case cases[] = {
      {"pod-no-affinity",
       required + R"({"nodeSelectorTerms":[{"matchExpressions":[)" + kR + "]}]}}}"},
      {"pod-empty-terms",
       required + R"({"nodeSelectorTerms":[{"matchExpressions":[)" + kR + "]}]}}}"},
      {"pod-several-terms", required + R"({"nodeSelectorTerms":[{"matchExpressions":[)" + kZone +
                                "," + kR + R"(]},{"matchFields":[)" + kField +
                                R"(],"matchExpressions":[)" + kR + "]}]}}}"},
      // Both terms already exclude hostnetwork=true (NotIn with "true" among other values too).
      {"pod-existing-notin", ""},
      // One term has it, one has not, and `{}` matches no node and stays so.
      {"pod-half-excluded", required + R"({"nodeSelectorTerms":[{"matchExpressions":[)" + kR +
                                R"(]},{"matchExpressions":[)" + kZone + "," + kR + "]},{}]}}}"},
      {"pod-preferred-only",
       R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,)"
       R"("preference":{"matchExpressions":[)" +
           kZone +
           R"(]}}],)"
           R"("requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[)" +
           kR +
           R"(]}]}},"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":)"
           R"([{"weight":100,"podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"web"}},)"
           R"("topologyKey":"kubernetes.io/hostname"}}]}})"},
      {"pod-annotation-false", ""},
      {"pod-not-annotated", ""},
      // hostNetwork with a containerPort and no hostPort: valid (hostPort defaults to it).
      {"pod-host-network", ""},
      // A template is not a pod: never mutated, never refused.
      {"deployment-host-network-template", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fixture);
    const std::string text = fixture(c.fixture);
    Admitted admitted = admit(std::string(kMutatePodsPath), text);
    EXPECT_TRUE(admitted.allowed);
    EXPECT_EQ(admitted.patched, !c.affinity.empty());
    rapidjson::Document original = parse(text);
    if (c.affinity.empty()) {
      EXPECT_TRUE(admitted.object == original["request"]["object"]);
      continue;
    }
    const rapidjson::Value* affinity = base::find_member(admitted.object["spec"], "affinity");
    ASSERT_NE(affinity, nullptr);
    EXPECT_EQ(base::to_json(*affinity), base::to_json(parse(c.affinity)));
    // A re-invoked webhook (reinvocationPolicy: IfNeeded) adds nothing more.
    EXPECT_FALSE(admit(std::string(kMutatePodsPath), review_of(admitted.object)).patched);
    // Nothing else of the pod changed.
    admitted.object["spec"].RemoveMember("affinity");
    original["request"]["object"]["spec"].RemoveMember("affinity");
    EXPECT_TRUE(admitted.object == original["request"]["object"]);
  }
}

TEST(MutatePods, MalformedAffinityIsLeftToTheApiserversValidation) {
  for (
      const std::string affinity :
      {R"("x")", R"({"nodeAffinity":[]})",
       R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":7}})",
       R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":{}}}})",
       R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[1,null,[]]}}})"}) {
    const std::string pod =
        R"({"metadata":{"annotations":{"apps.openyurt.io/exclude-host-network-pool":"true"}},)"
        R"("spec":{"affinity":)" +
        affinity + "}}";
    EXPECT_FALSE(admit(std::string(kMutatePodsPath), review_of(parse(pod))).patched) << affinity;
  }
}

TEST(ValidateNodes, OnlyTheLabellerChangesTheHostNetworkLabel) {
  const std::string changed = fixture("node-label-changed");
  Admitted by_admin = admit(std::string(kValidateNodesPath), changed);
  EXPECT_FALSE(by_admin.allowed);
  EXPECT_NE(by_admin.message.find("nodepool.openyurt.io/hostnetwork"), std::string::npos);
  EXPECT_NE(by_admin.message.find("not by admin"), std::string::npos);
  EXPECT_FALSE(by_admin.patched);

  rapidjson::Document as_labeller = parse(changed);
  as_labeller["request"]["userInfo"]["username"].SetString(
      kDefaultLabellerUsername.data(),
      static_cast<rapidjson::SizeType>(kDefaultLabellerUsername.size()));
  EXPECT_TRUE(admit(std::string(kValidateNodesPath), base::to_json(as_labeller)).allowed);

  // Other labels are anyone's; removing the label is a change too; a CREATE is allowed.
  EXPECT_TRUE(admit(std::string(kValidateNodesPath), fixture("node-other-label-changed")).allowed);
  rapidjson::Document removed = parse(changed);
  removed["request"]["object"]["metadata"]["labels"].RemoveMember(
      "nodepool.openyurt.io/hostnetwork");
  EXPECT_FALSE(admit(std::string(kValidateNodesPath), base::to_json(removed)).allowed);
  rapidjson::Document created = parse(changed);
  created["request"]["operation"].SetString("CREATE");
  created["request"]["oldObject"].SetNull();
  EXPECT_TRUE(admit(std::string(kValidateNodesPath), base::to_json(created)).allowed);
}

TEST(Webhook, BadInputGetsAStatusNotACrash) {
  struct Case {
    std::string path;
    std::string body;
    unsigned status;
    std::string message_part;
  };
  const Case cases[] = {
      {"/mutate-pods", "", 400, "not an AdmissionReview v1"},
      {"/mutate-pods", "{", 400, "not an AdmissionReview v1"},
      {"/mutate-pods", "[]", 400, "not a JSON object"},
      {"/mutate-pods", std::string(5000, '['), 400, "not an AdmissionReview v1"},
      {"/validate-nodes", R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"})",
       400, "admission.k8s.io/v1beta1"},
      {"/validate-nodes", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", 400,
       "no request"},
      {"/mutate-pods",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""}})", 400,
       "request.uid"},
      {"/mutate", "{}", 404, "/mutate-pods"},
  };
  for (const Case& c : cases) {
    const WebhookAnswer answer = answer_review(c.path, c.body, kConfig);
    EXPECT_EQ(answer.status, c.status) << c.body.substr(0, 80);
    rapidjson::Document status = parse(answer.body);
    EXPECT_EQ(base::string_member(status, "kind"), "Status");
    EXPECT_NE(base::string_member(status, "message").find(c.message_part), std::string::npos)
        << answer.body;
  }
  // A review with a request but no object, or an object of the wrong shape: allowed unchanged.
  const std::string no_object =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",)"
      R"("kind":{"kind":"Pod"},"object":"pod"}})";
  EXPECT_TRUE(admit(std::string(kMutatePodsPath), no_object).allowed);
  EXPECT_TRUE(admit(std::string(kValidateNodesPath), no_object).allowed);
}

}  // namespace
}  // namespace yurthub::admission
