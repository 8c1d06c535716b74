// KubeletNode: a test fixture that plays a node's kubelet against the real hub in front of the
// fake apiserver: its requests as kubelet sends them (User-Agent, `Accept: protobuf, json`,
// protobuf create and update bodies), its first start online (what it reads and writes), and a
// node reboot while the cloud is gone. Its informers' lists come in two shapes (ClientShape):
// kubelet v1.26's list+watch, or v1.35's streaming lists (WatchListClient on by default; the
// test's client-go reflector, reflector_client.h). Used by kubelet_restart_test.cc (one restart,
// request by request) and offline_window_test.cc (hours offline, with the hub's clock moved on),
// each run in both shapes.
#pragma once

#include <signal.h>

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "test/base/json_test_support.h"
#include "test/integration/cluster.h"
#include "test/integration/http_client.h"
#include "test/integration/reflector_client.h"

namespace yurthub::test {

inline constexpr const char* kKubelet126Agent = "kubelet/v1.26.1 (linux/amd64) kubernetes/8f94681";
inline constexpr const char* kKubelet135Agent = "kubelet/v1.35.0 (linux/amd64) kubernetes/66452049";
inline constexpr const char* kKubeletAccept =
    "application/vnd.kubernetes.protobuf,application/json";
inline constexpr const char* kProtobuf = "application/vnd.kubernetes.protobuf";
inline constexpr const char* kNodeName = "edge-node-1";
inline constexpr const char* kWebUid = "5f0c2f4e-8a51-4c3e-9d62-2b7f0e1a0c01";  // demo-objects.json
inline const std::string kLeases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
inline const std::string kLease = kLeases + "/edge-node-1";
inline const std::string kCSINode = "/apis/storage.k8s.io/v1/csinodes/edge-node-1";
inline const std::string kWebToken = "/api/v1/namespaces/default/serviceaccounts/default/token";

using ::yurthub::test_support::parse_json;
// A file of test/testdata/protobuf (kubelet's bodies as protoc encoded them).
std::string protobuf_fixture(const std::string& name);
// The number of items of a list response (0 when it is not one).
std::size_t list_items(const HttpResponse& r);

class KubeletNode : public testing::Test {
 protected:
  explicit KubeletNode(ClusterOptions options = demo_cluster()) : cluster_(std::move(options)) {}
  // The kubelet this fixture plays (before SetUp): v1.26's list+watch (the default) or v1.35's
  // streaming lists.
  void play_kubelet(ClientShape shape) { shape_ = shape; }
  const char* agent() const {
    return shape_ == ClientShape::WatchList ? kKubelet135Agent : kKubelet126Agent;
  }
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  int port() const { return cluster_.proxy_port(); }
  // One request as kubelet sends it.
  HttpResponse kubelet(const std::string& method, const std::string& target,
                       const std::string& content_type = "", const std::string& body = "");
  // An informer's first sync, as the kubelet played syncs it: v1.26's list (limit=500&
  // resourceVersion=0, the answer as it came), or v1.35's streaming list (falling back to that
  // list on an error), answered with the informer's store as a list: status 200, the synced
  // objects as items, the sync's resourceVersion; else the failed round's last status.
  HttpResponse list(const std::string& path, const std::string& field_selector = "");
  // web-0's projected token volume: its TokenRequest, as a JSON or protobuf body.
  HttpResponse request_web_token(bool protobuf);
  // The first run, online: kubelet reads and writes what it does at every start, and creates its
  // CSINode (then never reads it back, as the real one does) and its lease.
  void first_start_online();
  // The node reboots while the cloud is unreachable: the link is cut (the apiserver stops
  // answering: SIGSTOP, so it keeps what was written to it), the hub restarts.
  void reboot_offline();
  // The link returns (SIGCONT): the apiserver answers again, with everything it had.
  void link_returns();

  Cluster cluster_;
  ClientShape shape_ = ClientShape::ListWatch;
  std::string lease_rv_;      // of kubelet's last lease renewal online
  std::string online_token_;  // web-0's token, as the apiserver issued it
};

}  // namespace yurthub::test
