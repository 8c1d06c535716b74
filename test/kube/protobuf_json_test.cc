// The JSON form of kubelet's protobuf Leases and CSINodes, checked member for member and in order
// against the JSON written by hand from the same objects (test/testdata/protobuf/*.json: what
// kube-apiserver's JSON serializer prints for the object protoc encoded), and against bodies of
// the wrong kind or malformed.
#include "kube/protobuf_json.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::kube {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

// The hand-written JSON without its indentation, members in the order written.
std::string compact(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  doc.Accept(w);
  return buffer.GetString();
}

TEST(ProtobufJson, RendersKubeletsObjectsAsTheApiserverDoes) {
  struct Case {
    const char* name;
    const char* kind;
    const char* api_version;
  };
  for (const Case& c : {Case{"lease-update", "Lease", "coordination.k8s.io/v1"},
                        Case{"lease-create", "Lease", "coordination.k8s.io/v1"},
                        Case{"csinode-create", "CSINode", "storage.k8s.io/v1"},
                        Case{"csinode-update", "CSINode", "storage.k8s.io/v1"}}) {
    const std::string name = c.name;
    auto json = protobuf_object_json(fixture(name + ".pb"), c.kind, c.api_version);
    ASSERT_TRUE(json) << name << ": " << json.error().message;
    EXPECT_EQ(*json, compact(fixture(name + ".json"))) << name;
  }
}

TEST(ProtobufJson, OnlyKindsItCanReadAndOnlyOfTheKindTheUrlNames) {
  EXPECT_TRUE(protobuf_kind_readable("Lease"));
  EXPECT_TRUE(protobuf_kind_readable("CSINode"));
  EXPECT_FALSE(protobuf_kind_readable("Node"));
  EXPECT_FALSE(protobuf_kind_readable("Pod"));

  auto node = protobuf_object_json(fixture("node-create.pb"), "Node", "v1");
  ASSERT_FALSE(node);
  EXPECT_EQ(node.error().code, ErrorCode::NotFound);
  // A Lease sent to a CSINode's URL, a JSON body, a truncated body: refused, never guessed.
  auto wrong = protobuf_object_json(fixture("lease-update.pb"), "CSINode", "storage.k8s.io/v1");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ErrorCode::InvalidArgument);
  EXPECT_FALSE(protobuf_object_json(R"({"kind":"CSINode"})", "CSINode", "storage.k8s.io/v1"));
  const std::string body = fixture("csinode-update.pb");
  for (std::size_t n = 0; n < body.size(); ++n) {
    // Every truncation fails cleanly or renders a prefix's fields; none crashes.
    (void)protobuf_object_json(body.substr(0, n), "CSINode", "storage.k8s.io/v1");
  }
  EXPECT_FALSE(
      protobuf_object_json(body.substr(0, body.size() - 20), "CSINode", "storage.k8s.io/v1"));
}

TEST(ProtobufJson, RepeatedMapKeysKeepTheLastValueOnce) {
  // ObjectMeta{name "n", labels {a: 1}, labels {b: 2}, labels {a: 3}} in a CSINode envelope.
  auto entry = [](const std::string& k, const std::string& v) {
    std::string e = "\x0a" + std::string(1, static_cast<char>(k.size())) + k + "\x12" +
                    std::string(1, static_cast<char>(v.size())) + v;
    return "\x5a" + std::string(1, static_cast<char>(e.size())) + e;
  };
  const std::string meta = "\x0a\x01n" + entry("a", "1") + entry("b", "2") + entry("a", "3");
  const std::string object = "\x0a" + std::string(1, static_cast<char>(meta.size())) + meta;
  const std::string type =
      "\x0a\x11storage.k8s.io/v1\x12\x07"
      "CSINode";
  const std::string unknown = "\x0a" + std::string(1, static_cast<char>(type.size())) + type +
                              "\x12" + std::string(1, static_cast<char>(object.size())) + object;
  auto json =
      protobuf_object_json(std::string("k8s\0", 4) + unknown, "CSINode", "storage.k8s.io/v1");
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_EQ(*json,
            R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"n",)"
            R"("creationTimestamp":null,"labels":{"a":"3","b":"2"}},"spec":{"drivers":null}})");
}

}  // namespace
}  // namespace yurthub::kube
