// ota/ota_handler's routing: which admin-port paths are the OTA endpoints (upstream's gorilla/mux
// routes), and which namespace and pod they name.
#include <gtest/gtest.h>

#include "ota/ota_handler.h"

namespace yurthub::ota {
namespace {

TEST(ParseOtaPath, TheThreeEndpoints) {
  auto pods = parse_ota_path("/pods");
  ASSERT_TRUE(pods);
  EXPECT_EQ(pods->endpoint, OtaPath::Endpoint::Pods);

  auto upgrade = parse_ota_path("/openyurt.io/v1/namespaces/kube-system/pods/yurthub-n1/upgrade");
  ASSERT_TRUE(upgrade);
  EXPECT_EQ(upgrade->endpoint, OtaPath::Endpoint::Upgrade);
  EXPECT_EQ(upgrade->namespace_name, "kube-system");
  EXPECT_EQ(upgrade->pod_name, "yurthub-n1");

  auto pull = parse_ota_path("/openyurt.io/v1/namespaces/default/pods/web.0/imagepull");
  ASSERT_TRUE(pull);
  EXPECT_EQ(pull->endpoint, OtaPath::Endpoint::ImagePull);
  EXPECT_EQ(pull->pod_name, "web.0");
}

TEST(ParseOtaPath, AnythingElseIsNotOurs) {
  for (const char* path : {"/pods/", "/podsx", "/v1/healthz", "/openyurt.io/v1/namespaces/",
                           "/openyurt.io/v1/namespaces/default/pods/web/upgrade/",
                           "/openyurt.io/v1/namespaces/default/pods/web/restart",
                           "/openyurt.io/v1/namespaces/default/pods//upgrade",
                           "/openyurt.io/v1/namespaces/default/services/web/upgrade",
                           "/openyurt.io/v1/namespaces/default/pods/web/x/upgrade",
                           "/openyurt.io/v1/namespaces/default/pods/Web/upgrade",
                           "/openyurt.io/v1/namespaces/default/pods/web%2Fx/upgrade",
                           "/openyurt.io/v1/namespaces/de fault/pods/web/upgrade"}) {
    EXPECT_FALSE(parse_ota_path(path)) << path;
  }
}

}  // namespace
}  // namespace yurthub::ota
