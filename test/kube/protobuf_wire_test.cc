// The protobuf reader against bodies encoded by an independent encoder (Debian's protoc, from
// upstream's .proto files: test/testdata/protobuf), and against malformed input.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "kube/protobuf_wire.h"

namespace yurthub::kube {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

TEST(ProtobufWire, KubeletsLeaseRenewal) {
  const std::string body = fixture("lease-update.pb");
  auto envelope = unwrap_protobuf(body);
  ASSERT_TRUE(envelope);
  EXPECT_EQ(envelope->api_version, "coordination.k8s.io/v1");
  EXPECT_EQ(envelope->kind, "Lease");
  auto lease = decode_lease(envelope->raw);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->metadata.name, "edge-1");
  EXPECT_EQ(lease->metadata.namespace_name, "kube-node-lease");
  EXPECT_EQ(lease->metadata.uid, "c1b6f0a2-3d4e-4f5a-9b8c-7d6e5f4a3b2c");
  EXPECT_EQ(lease->metadata.resource_version, "1234");
  ASSERT_EQ(lease->metadata.owner_references.size(), 1u);
  EXPECT_EQ(lease->metadata.owner_references[0].kind, "Node");
  EXPECT_EQ(lease->metadata.owner_references[0].uid, "5a3c0e4e-9b7a-4c1e-8a2f-1f0f6b7d9e01");
  EXPECT_EQ(lease->holder_identity, "edge-1");
  EXPECT_EQ(lease->lease_duration_seconds, 40);
  EXPECT_EQ(lease->renew_time, "2026-11-23T10:00:05.123456Z");  // as lease-update.json has it
  EXPECT_FALSE(lease->acquire_time);
  EXPECT_FALSE(lease->lease_transitions);
}

TEST(ProtobufWire, KubeletsLeaseCreate) {
  const std::string body = fixture("lease-create.pb");  // the envelope points into it
  auto envelope = unwrap_protobuf(body);
  ASSERT_TRUE(envelope);
  auto lease = decode_lease(envelope->raw);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->metadata.name, "edge-1");
  EXPECT_EQ(lease->metadata.uid, "");
  EXPECT_EQ(lease->metadata.resource_version, "");
  EXPECT_EQ(lease->renew_time, "2026-11-23T09:00:00.250000Z");
}

TEST(ProtobufWire, KubeletsTokenRequests) {
  const std::string body = fixture("token-request.pb");
  auto envelope = unwrap_protobuf(body);
  ASSERT_TRUE(envelope);
  EXPECT_EQ(envelope->kind, "TokenRequest");
  auto token = decode_token_request(envelope->raw);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->audiences,
            std::vector<std::string>{"https://kubernetes.default.svc.cluster.local"});
  EXPECT_EQ(token->expiration_seconds, 3607);
  EXPECT_EQ(token->bound_kind, "Pod");
  EXPECT_EQ(token->bound_api_version, "v1");
  EXPECT_EQ(token->bound_name, "web-0");
  EXPECT_EQ(token->bound_uid, "0b9e5c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e");

  const std::string other_body = fixture("token-request-other-audience.pb");
  auto other = decode_token_request(unwrap_protobuf(other_body)->raw);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->audiences, std::vector<std::string>{"vault"});
  EXPECT_EQ(other->expiration_seconds, 600);
}

TEST(ProtobufWire, ObjectNamesOfNodeCSINodeAndEvent) {
  struct Case {
    const char* file;
    const char* kind;
    const char* name;
    const char* namespace_name;
  };
  for (const Case& c : {Case{"node-create.pb", "Node", "edge-1", ""},
                        Case{"csinode-create.pb", "CSINode", "edge-1", ""},
                        Case{"event-create.pb", "Event", "edge-1.17a9b3c4d5e6f708", "default"}}) {
    const std::string body = fixture(c.file);
    auto envelope = unwrap_protobuf(body);
    ASSERT_TRUE(envelope) << c.file;
    EXPECT_EQ(envelope->kind, c.kind);
    auto meta = decode_object_metadata(envelope->raw);
    ASSERT_TRUE(meta) << c.file;
    EXPECT_EQ(meta->name, c.name);
    EXPECT_EQ(meta->namespace_name, c.namespace_name);
  }
}

TEST(ProtobufWire, KubeletsCSINodeUpdate) {
  const std::string body = fixture("csinode-update.pb");
  auto envelope = unwrap_protobuf(body);
  ASSERT_TRUE(envelope);
  EXPECT_EQ(envelope->kind, "CSINode");
  auto csinode = decode_csinode(envelope->raw);
  ASSERT_TRUE(csinode);
  EXPECT_EQ(csinode->metadata.name, "edge-1");
  EXPECT_EQ(csinode->metadata.uid, "7c0d9a8e-1b2c-4d3e-9f40-5a6b7c8d9e0f");
  EXPECT_EQ(csinode->metadata.resource_version, "4711");
  EXPECT_EQ(csinode->metadata.creation_timestamp, "2026-11-23T09:00:00Z");
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(csinode->metadata.labels, (Pairs{{"example.com/zone", "a"}}));
  EXPECT_EQ(csinode->metadata.annotations,
            (Pairs{{"storage.alpha.kubernetes.io/migrated-plugins", "kubernetes.io/aws-ebs"}}));
  ASSERT_EQ(csinode->drivers.size(), 1u);
  EXPECT_EQ(csinode->drivers[0].name, "csi.example.com");
  EXPECT_EQ(csinode->drivers[0].node_id, "edge-1");
  EXPECT_EQ(csinode->drivers[0].topology_keys,
            std::vector<std::string>{"topology.example.com/zone"});
  EXPECT_TRUE(csinode->drivers[0].has_allocatable);
  EXPECT_EQ(csinode->drivers[0].allocatable_count, 16);

  // The create has no drivers, and a zero creationTimestamp (an empty Time message).
  const std::string create = fixture("csinode-create.pb");
  auto created = decode_csinode(unwrap_protobuf(create)->raw);
  ASSERT_TRUE(created);
  EXPECT_TRUE(created->drivers.empty());
  EXPECT_FALSE(created->metadata.creation_timestamp);
}

TEST(ProtobufWire, MalformedBodiesAreRefusedNotGuessed) {
  const std::string good = fixture("lease-update.pb");
  EXPECT_FALSE(unwrap_protobuf(""));
  EXPECT_FALSE(unwrap_protobuf("{\"kind\":\"Lease\"}"));
  EXPECT_FALSE(unwrap_protobuf(std::string("k8s\0", 4)));  // no raw object
  // Every truncation of a valid body either fails cleanly or decodes a prefix; none crashes.
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::string truncated = good.substr(0, n);
    auto envelope = unwrap_protobuf(truncated);
    if (envelope) decode_lease(envelope->raw);
  }
  // A length past the end, an eleven-byte varint, a group wire type.
  EXPECT_FALSE(unwrap_protobuf(std::string("k8s\0\x12\x7f", 6)));
  EXPECT_FALSE(unwrap_protobuf(std::string("k8s\0\x08", 5) + std::string(11, '\xff')));
  EXPECT_FALSE(unwrap_protobuf(std::string("k8s\0\x0b", 5)));
  // A compressed envelope (contentEncoding) is not read.
  EXPECT_FALSE(unwrap_protobuf(std::string("k8s\0\x12\x00\x1a\x04gzip", 11)));
  WireReader r(std::string_view("\x08", 1));
  EXPECT_FALSE(r.next());
  EXPECT_TRUE(r.failed());
}

TEST(ProtobufWire, TimesAsJsonWritesThem) {
  EXPECT_EQ(format_time(1795428005, 123456789, true), "2026-11-23T10:00:05.123456Z");
  EXPECT_EQ(format_time(1795424400, 0, false), "2026-11-23T09:00:00Z");
  EXPECT_EQ(format_time(0, 0, true), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(format_time(-62135596800, 0, false), "0001-01-01T00:00:00Z");
}

}  // namespace
}  // namespace yurthub::kube
