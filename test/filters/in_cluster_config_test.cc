// Tests for filters/in_cluster_config.cc: `kubeconfig:` lines of kube-system/kube-proxy's
// config.conf are commented out (indentation, other lines, other keys and CRLF kept), lines that
// do not split into exactly two parts or do not start with `kubeconfig` are left alone (as
// YurtHub), other ConfigMaps and odd shapes pass unchanged; ready() and handles().
#include "filters/in_cluster_config.h"

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

std::string json_string(const std::string& text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return buffer.GetString();
}

// The kubeadm kube-proxy ConfigMap, with `conf` as data["config.conf"] (a JSON value when
// `raw`, else a string to encode); `head` is spliced first (kind/apiVersion of watch objects).
std::string configmap(const std::string& ns, const std::string& name, const std::string& conf,
                      bool raw = false, const std::string& head = "") {
  const std::string kubeconfig =
      "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n"
      "  name: default\nusers:\n- name: default\n  user:\n    tokenFile: /var/run/token\n"
      "kubeconfig: unused\n";
  return "{" + head + R"("metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","resourceVersion":"230","labels":{"app":"kube-proxy"}},"data":{"config.conf":)" +
         (raw ? conf : json_string(conf)) + R"(,"kubeconfig.conf":)" + json_string(kubeconfig) +
         "}}";
}

std::string proxy(const std::string& conf) { return configmap("kube-system", "kube-proxy", conf); }

const std::string kConf =
    "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\nclientConnection:\n"
    "  acceptContentTypes: \"\"\n  burst: 0\n  contentType: \"\"\n"
    "  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n  qps: 0\nclusterCIDR: 10.244.0.0/16\n"
    "kind: KubeProxyConfiguration\nmode: \"\"\n";
const std::string kCommented =
    "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\nclientConnection:\n"
    "  acceptContentTypes: \"\"\n  burst: 0\n  contentType: \"\"\n"
    "  #kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n  qps: 0\nclusterCIDR: 10.244.0.0/16\n"
    "kind: KubeProxyConfiguration\nmode: \"\"\n";

TEST(InClusterConfigFilter, Apply) {
  auto filter = make_in_cluster_config_filter();
  const std::string kHead = R"("kind":"ConfigMap","apiVersion":"v1",)";
  const std::vector<ApplyCase> cases = {
      {"kubeadm config commented", proxy(kConf), {}, Verdict::Modified, proxy(kCommented)},
      {"watch object",
       configmap("kube-system", "kube-proxy", kConf, false, kHead),
       {},
       Verdict::Modified,
       configmap("kube-system", "kube-proxy", kCommented, false, kHead)},
      {"already commented", proxy(kCommented), {}, Verdict::Keep, ""},
      {"top level, no trailing newline",
       proxy("kubeconfig: /k.conf"),
       {},
       Verdict::Modified,
       proxy("#kubeconfig: /k.conf")},
      {"every matching line",
       proxy("a:\n  kubeconfig: /a\nb:\n    kubeconfig: /b\n"),
       {},
       Verdict::Modified,
       proxy("a:\n  #kubeconfig: /a\nb:\n    #kubeconfig: /b\n")},
      {"empty value is still two parts",
       proxy("  kubeconfig:\n"),
       {},
       Verdict::Modified,
       proxy("  #kubeconfig:\n")},
      {"CRLF kept",
       proxy("x: 1\r\n  kubeconfig: /k\r\n"),
       {},
       Verdict::Modified,
       proxy("x: 1\r\n  #kubeconfig: /k\r\n")},
      {"three parts (Windows path)",
       proxy("kubeconfig: C:\\k\\kubeconfig.conf\n"),
       {},
       Verdict::Keep,
       ""},
      {"other key containing kubeconfig",
       proxy("kubeconfigPath: /k\nmykubeconfig: /k\n"),
       {},
       Verdict::Keep,
       ""},
      {"kubeconfig only in a value", proxy("path: kubeconfig\n"), {}, Verdict::Keep, ""},
      {"space before the colon (as YurtHub)", proxy("  kubeconfig : /k\n"), {}, Verdict::Keep, ""},
      {"tab indentation is not trimmed (as YurtHub)",
       proxy("\tkubeconfig: /k\n"),
       {},
       Verdict::Keep,
       ""},
      {"empty config", proxy(""), {}, Verdict::Keep, ""},
      {"other ConfigMap", configmap("kube-system", "coredns", kConf), {}, Verdict::Keep, ""},
      {"kube-proxy in another namespace",
       configmap("default", "kube-proxy", kConf),
       {},
       Verdict::Keep,
       ""},
      {"config.conf not a string",
       configmap("kube-system", "kube-proxy", "42", true),
       {},
       Verdict::Keep,
       ""},
      {"config.conf missing",
       R"({"metadata":{"name":"kube-proxy","namespace":"kube-system"},"data":{"x":"kubeconfig: a"}})",
       {},
       Verdict::Keep,
       ""},
      {"data not an object",
       R"({"metadata":{"name":"kube-proxy","namespace":"kube-system"},"data":["kubeconfig: a"]})",
       {},
       Verdict::Keep,
       ""},
      {"data missing",
       R"({"metadata":{"name":"kube-proxy","namespace":"kube-system"}})",
       {},
       Verdict::Keep,
       ""},
      {"not an object", R"("kubeconfig: a")", {}, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

TEST(InClusterConfigFilter, AlwaysReady) {
  auto filter = make_in_cluster_config_filter();
  EXPECT_TRUE(filter->ready(ClusterView{}));
  EXPECT_FALSE(filter->reactive());
  EXPECT_EQ(filter->name(), "inclusterconfig");
}

TEST(InClusterConfigFilter, Handles) {
  auto filter = make_in_cluster_config_filter();
  test_support::expect_handles(
      *filter, {
                   {"GET", "/api/v1/namespaces/kube-system/configmaps/kube-proxy", true},
                   {"GET", "/api/v1/namespaces/kube-system/configmaps", true},
                   {"GET", "/api/v1/configmaps?watch=true", true},
                   {"GET",
                    "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3D"
                    "kube-proxy&watch=1",
                    true},
                   {"PUT", "/api/v1/namespaces/kube-system/configmaps/kube-proxy", false},
                   {"GET", "/api/v1/namespaces/kube-system/secrets/kube-proxy", false},
                   {"GET", "/apis/example.com/v1/configmaps", false},
               });
}

}  // namespace
}  // namespace yurthub::filters
