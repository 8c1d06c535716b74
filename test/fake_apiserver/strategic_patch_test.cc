// Tests of the fake apiserver's own strategic merge patch (strategic_patch.h). First against the
// captures of a real kube-apiserver v1.26 (test/testdata/fixtures/apiserver-v1.26
// {pod,node}-status-smp: the patch kubelet-style clients sent and the object the apiserver
// answered with), then the directives and merge rules one by one.
//
// The captures hold the object after the patch, not before. A "before" is derived from the
// recorded object: the managedFields entry of the status writer (manager kubelet / curl,
// subresource status, same second) says which fields the patch set, so those are taken out (and
// phase put back to Pending, which a created pod starts with). Each capture is also replayed onto
// a second "before" that already holds older versions of the patched list elements, in another
// order, to exercise the merge by key, $setElementOrder and the atomic lists. Either way the
// result must equal the recorded object. Null members are ignored in the comparison: the
// apiserver writes a typed object, which prints an unset time as null and cannot tell it from
// an absent one.
#include "test/fake_apiserver/strategic_patch.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/seed.h"

namespace yurthub::fake {
namespace {

rapidjson::Document json(const std::string& text) {
  auto doc = parse_json(text);
  EXPECT_TRUE(doc) << text;
  return doc ? std::move(*doc) : rapidjson::Document();
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/fixtures/apiserver-v1.26/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

void drop_nulls(rapidjson::Value& v) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
      if (it->value.IsNull()) {
        it = v.EraseMember(it);
      } else {
        drop_nulls(it->value);
        ++it;
      }
    }
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) drop_nulls(e);
  }
}

::testing::AssertionResult same_object(rapidjson::Document got, rapidjson::Document want) {
  drop_nulls(got);
  drop_nulls(want);
  if (json_equal(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got  " << to_json(got) << "\nwant " << to_json(want);
}

rapidjson::Document smp(const rapidjson::Document& before, const std::string& patch,
                        std::string_view kind) {
  rapidjson::Document doc;
  doc.CopyFrom(before, doc.GetAllocator());
  auto error = apply_strategic_merge_patch(doc, json(patch), kind);
  EXPECT_FALSE(error) << error->message;
  return doc;
}

void set_member(rapidjson::Document& doc, const char* object, const char* name,
                const std::string& value_json) {
  auto value = json(value_json);
  rapidjson::Value& parent = doc[object];
  parent.RemoveMember(name);
  parent.AddMember(rapidjson::Value(name, doc.GetAllocator()),
                   rapidjson::Value(value, doc.GetAllocator()), doc.GetAllocator());
}

TEST(StrategicPatchFixtureTest, PodStatusAsKubeletSendsIt) {
  std::string patch = fixture("pod-status-smp.request.json");
  auto after = json(fixture("pod-status-smp.response.body"));
  rapidjson::Document before;
  before.CopyFrom(after, before.GetAllocator());
  for (const char* f :
       {"conditions", "containerStatuses", "hostIP", "podIP", "podIPs", "startTime"}) {
    before["status"].RemoveMember(f);
  }
  set_member(before, "status", "phase", R"("Pending")");
  EXPECT_TRUE(
      same_object(smp(before, patch, "Pod"), json(fixture("pod-status-smp.response.body"))));

  // Older conditions in another order: merged by type and put in $setElementOrder's order. An
  // older containerStatuses entry with a waiting state: the list is atomic, so nothing of it
  // survives (merged by name, state.waiting would).
  set_member(
      before, "status", "conditions",
      R"([{"type":"Ready","status":"False","lastTransitionTime":"2026-11-21T09:00:00Z"},)"
      R"({"type":"Initialized","status":"False","lastTransitionTime":"2026-11-21T09:00:00Z"}])");
  set_member(before, "status", "containerStatuses",
             R"([{"name":"web","ready":false,"restartCount":0,"image":"nginx:1.25","imageID":"",)"
             R"("state":{"waiting":{"reason":"ContainerCreating"}},"lastState":{}}])");
  set_member(before, "status", "podIPs", R"([{"ip":"192.0.2.31"}])");
  EXPECT_TRUE(
      same_object(smp(before, patch, "Pod"), json(fixture("pod-status-smp.response.body"))));
}

TEST(StrategicPatchFixtureTest, NodeStatusAsKubeletSendsIt) {
  std::string patch = fixture("node-status-smp.request.json");
  auto after = json(fixture("node-status-smp.response.body"));
  rapidjson::Document before;
  before.CopyFrom(after, before.GetAllocator());
  before["status"].RemoveMember("conditions");
  before["status"].RemoveMember("addresses");
  EXPECT_TRUE(
      same_object(smp(before, patch, "Node"), json(fixture("node-status-smp.response.body"))));

  // Older conditions (Ready first) and addresses (Hostname first, another InternalIP): merged by
  // type; conditions in $setElementOrder's order, addresses in the patch's.
  set_member(
      before, "status", "conditions",
      R"([{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown",)"
      R"("message":"Kubelet stopped posting node status.","lastHeartbeatTime":"2026-11-21T09:00:00Z",)"
      R"("lastTransitionTime":"2026-11-21T09:00:00Z"},{"type":"MemoryPressure","status":"Unknown",)"
      R"("reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status.",)"
      R"("lastHeartbeatTime":"2026-11-21T09:00:00Z","lastTransitionTime":"2026-11-21T09:00:00Z"}])");
  set_member(
      before, "status", "addresses",
      R"([{"type":"Hostname","address":"edge-node-1"},{"type":"InternalIP","address":"192.0.2.99"}])");
  EXPECT_TRUE(
      same_object(smp(before, patch, "Node"), json(fixture("node-status-smp.response.body"))));
}

// The same capture through the fake's PATCH handler on pods/status.
TEST(StrategicPatchFixtureTest, PodStatusThroughTheHandler) {
  Store store(100);
  ApiHandlers api(store);
  auto after = json(fixture("pod-status-smp.response.body"));
  after["status"].RemoveMember("conditions");
  after["status"].RemoveMember("containerStatuses");
  auto seeded = load_seed_text(api, "[" + to_json(after) + "]");
  ASSERT_TRUE(seeded) << seeded.error().message;
  ApiRequest req;
  req.resource = find_resource("", "v1", "pods");
  req.path.version = "v1";
  req.path.resource = "pods";
  req.path.ns = "default";
  req.path.name = "web-0";
  req.path.subresource = "status";
  req.body = fixture("pod-status-smp.request.json");
  req.content_type = "application/strategic-merge-patch+json";
  Reply r = api.patch(req);
  ASSERT_EQ(r.status, 200u) << r.body;
  auto got = json(r.body);
  auto want = json(fixture("pod-status-smp.response.body"));
  EXPECT_TRUE(same_object(json(to_json(got["status"])), json(to_json(want["status"]))));
}

struct Case {
  const char* name;
  const char* kind;
  const char* doc;
  const char* patch;
  const char* want;
};

const Case kCases[] = {
    {"maps merge, null deletes, nulls in new values are dropped", "ConfigMap",
     R"({"metadata":{"labels":{"a":"1","b":"2"}},"data":{"x":"1"}})",
     R"({"metadata":{"labels":{"a":null,"c":"3"},"annotations":{"n":"1","gone":null}}})",
     R"({"metadata":{"labels":{"b":"2","c":"3"},"annotations":{"n":"1"}},"data":{"x":"1"}})"},
    {"lists without a strategy are replaced", "Pod",
     R"({"spec":{"tolerations":[{"key":"a"},{"key":"b"}]}})",
     R"({"spec":{"tolerations":[{"key":"c"}]}})", R"({"spec":{"tolerations":[{"key":"c"}]}})"},
    {"node taints are atomic", "Node", R"({"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}})",
     R"({"spec":{"taints":[{"key":"b","effect":"NoExecute"}]}})",
     R"({"spec":{"taints":[{"key":"b","effect":"NoExecute"}]}})"},
    {"containers merge by name, their env by name", "Pod",
     R"({"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"E","value":"1"}]},{"name":"b","image":"y"}]}})",
     R"({"spec":{"containers":[{"name":"a","image":"z","env":[{"name":"F","value":"2"}]}]}})",
     R"({"spec":{"containers":[{"name":"a","image":"z","env":[{"name":"F","value":"2"},{"name":"E","value":"1"}]},{"name":"b","image":"y"}]}})"},
    {"a new condition goes before the ones only the server has", "Pod",
     R"({"status":{"conditions":[{"type":"A"},{"type":"B"}]}})",
     R"({"status":{"conditions":[{"type":"C"}]}})",
     R"({"status":{"conditions":[{"type":"C"},{"type":"A"},{"type":"B"}]}})"},
    {"an updated condition keeps its place", "Pod",
     R"({"status":{"conditions":[{"type":"A"},{"type":"B","status":"False"}]}})",
     R"({"status":{"conditions":[{"type":"B","status":"True"}]}})",
     R"({"status":{"conditions":[{"type":"A"},{"type":"B","status":"True"}]}})"},
    {"$patch: delete removes an element", "Pod",
     R"({"status":{"conditions":[{"type":"A"},{"type":"B"}]}})",
     R"({"status":{"conditions":[{"type":"A","$patch":"delete"}]}})",
     R"({"status":{"conditions":[{"type":"B"}]}})"},
    {"$patch: replace replaces a list", "Pod",
     R"({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b"}]}})",
     R"({"spec":{"containers":[{"name":"c","image":"z"},{"$patch":"replace"}]}})",
     R"({"spec":{"containers":[{"name":"c","image":"z"}]}})"},
    {"$patch: replace replaces a map", "ConfigMap", R"({"data":{"a":"1","b":"2"}})",
     R"({"data":{"$patch":"replace","c":"3"}})", R"({"data":{"c":"3"}})"},
    {"$patch: replace takes the patch's map unmerged: directives and nulls dropped", "Pod",
     R"({"metadata":{"finalizers":["x"]},"spec":{"nodeName":"n","containers":[{"name":"a"},{"name":"b"}]}})",
     R"({"metadata":{"$patch":"replace","finalizers":["a","b"],"$deleteFromPrimitiveList/finalizers":["a"]},)"
     R"("spec":{"$patch":"replace","containers":[{"name":"a","image":"x2"},{"name":"b","image":"y2"},)"
     R"({"name":"c","$patch":"delete"}],"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],)"
     R"("nodeName":null}})",
     R"({"metadata":{"finalizers":["a","b"]},"spec":{"containers":[{"name":"a","image":"x2"},)"
     R"({"name":"b","image":"y2"}]}})"},
    {"a misspelt directive in a replaced map is dropped as an unknown field", "Pod",
     R"({"metadata":{"labels":{"app":"web"}}})",
     R"({"metadata":{"labels":{"$patch":"replace","app":"web2","$deleteFromPrimitiveLst/x":["a"]}}})",
     R"({"metadata":{"labels":{"app":"web2"}}})"},
    {"$patch: delete empties a map", "ConfigMap", R"({"data":{"a":"1"},"metadata":{"name":"x"}})",
     R"({"data":{"$patch":"delete"}})", R"({"data":{},"metadata":{"name":"x"}})"},
    {"finalizers are a set; a new one comes first", "ConfigMap",
     R"({"metadata":{"finalizers":["a","b"]}})", R"({"metadata":{"finalizers":["b","c"]}})",
     R"({"metadata":{"finalizers":["a","b","c"]}})"},
    {"a lone new finalizer comes first", "ConfigMap", R"({"metadata":{"finalizers":["a","b"]}})",
     R"({"metadata":{"finalizers":["c"]}})", R"({"metadata":{"finalizers":["c","a","b"]}})"},
    {"$deleteFromPrimitiveList", "ConfigMap", R"({"metadata":{"finalizers":["a","b","c"]}})",
     R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}})",
     R"({"metadata":{"finalizers":["a","c"]}})"},
    {"$setElementOrder orders a primitive set", "ConfigMap",
     R"({"metadata":{"finalizers":["a","b"]}})",
     R"({"metadata":{"$setElementOrder/finalizers":["b","c","a"],"finalizers":["c"]}})",
     R"({"metadata":{"finalizers":["b","c","a"]}})"},
    {"ownerReferences merge by uid in every kind", "ConfigMap",
     R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a"}]}})",
     R"({"metadata":{"ownerReferences":[{"uid":"2","name":"b"}]}})",
     R"({"metadata":{"ownerReferences":[{"uid":"2","name":"b"},{"uid":"1","name":"a"}]}})"},
    {"$retainKeys drops the members it does not name", "Pod",
     R"({"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"}}]}})",
     R"({"spec":{"volumes":[{"name":"v","emptyDir":{},"$retainKeys":["name","emptyDir"]}]}})",
     R"({"spec":{"volumes":[{"name":"v","emptyDir":{}}]}})"},
    {"a new list is taken without its nulls and directives", "Pod", R"({"status":{}})",
     R"({"status":{"conditions":[{"type":"A","lastProbeTime":null},{"type":"B","$patch":"delete"}]}})",
     R"({"status":{"conditions":[{"type":"A"}]}})"},
    {"service ports merge by port", "Service",
     R"({"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"}]}})",
     R"({"spec":{"ports":[{"port":443,"targetPort":8443}]}})",
     R"({"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https","targetPort":8443}]}})"},
};

TEST(StrategicPatchTest, MergeRulesAndDirectives) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    auto doc = json(c.doc);
    auto error = apply_strategic_merge_patch(doc, json(c.patch), c.kind);
    ASSERT_FALSE(error) << error->message;
    EXPECT_TRUE(json_equal(doc, json(c.want))) << to_json(doc);
  }
}

struct ErrorCase {
  const char* name;
  const char* doc;
  const char* patch;
  PatchFailure failure;
  const char* message;
};

const ErrorCase kErrors[] = {
    {"not an object", "{}", "[1]", PatchFailure::BadRequest,
     "json: cannot unmarshal array into Go value of type map[string]interface {}"},
    {"unknown $patch in a map", R"({"metadata":{"labels":{"a":"1"}}})",
     R"({"metadata":{"labels":{"z":"1","$patch":"merge"}}})", PatchFailure::Unknown,
     "unknown patch type: merge in map: map[$patch:merge z:1]"},
    {"element without its merge key", R"({"spec":{"containers":[{"name":"a"}]}})",
     R"({"spec":{"containers":[{"image":"nginx"}]}})", PatchFailure::Unknown,
     "map: map[image:nginx] does not contain declared merge key: name"},
    {"$patch: merge in a list", R"({"spec":{"containers":[{"name":"a"}]}})",
     R"({"spec":{"containers":[{"name":"a","$patch":"merge"}]}})", PatchFailure::Unknown,
     "merging lists cannot yet be specified in the patch"},
    {"$retainKeys not naming a patched member", R"({"spec":{"x":1}})",
     R"({"spec":{"$retainKeys":["x"],"y":2}})", PatchFailure::BadRequest,
     "invalid patch format of retainKeys"},
    {"lists of lists", R"({"metadata":{"finalizers":[]}})",
     R"({"metadata":{"finalizers":[["b"]]}})", PatchFailure::Rejected,
     "lists of lists are not supported"},
    {"$setElementOrder contradicting its list", R"({"status":{"conditions":[{"type":"A"}]}})",
     R"({"status":{"$setElementOrder/conditions":[{"type":"A"}],"conditions":[{"type":"B"}]}})",
     PatchFailure::Unknown,
     "The order in patch list:\n[map[type:B]]\n doesn't match $setElementOrder "
     "list:\n[map[type:A]]\n"},
};

TEST(StrategicPatchTest, ErrorsAreTheApiserversAndLeaveTheObjectAlone) {
  for (const ErrorCase& c : kErrors) {
    SCOPED_TRACE(c.name);
    auto doc = json(c.doc);
    auto error = apply_strategic_merge_patch(doc, json(c.patch), "Pod");
    ASSERT_TRUE(error) << to_json(doc);
    EXPECT_EQ(error->failure, c.failure);
    EXPECT_EQ(error->message, c.message);
    EXPECT_TRUE(json_equal(doc, json(c.doc))) << to_json(doc);
  }
}

}  // namespace
}  // namespace yurthub::fake
