// URL helpers (base/url.h): query encoding as Go's url.ParseQuery reads it back, and authorities
// with IPv6 literals bracketed.
#include "base/url.h"

#include <gtest/gtest.h>

namespace yurthub::base {
namespace {

TEST(AppendQueryParam, EncodesAllButUnreservedCharacters) {
  std::string target = "/api/v1/pods";
  append_query_param(target, "labelSelector", "app in (a,b)");
  append_query_param(target, "watch", "1");
  EXPECT_EQ(target, "/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29&watch=1");
  target = "/x?a=b";
  append_query_param(target, "k=y&", "aZ09-._~ spec.nodeName=edge-1+%\xc3\xa9");
  EXPECT_EQ(target, "/x?a=b&k%3Dy%26=aZ09-._~%20spec.nodeName%3Dedge-1%2B%25%C3%A9");
  target = "/x";
  append_query_param(target, "", "");
  EXPECT_EQ(target, "/x?=");
}

TEST(HostPort, BracketsIpv6Literals) {
  EXPECT_EQ(host_port("127.0.0.1", "10261"), "127.0.0.1:10261");
  EXPECT_EQ(host_port("apiserver.example", "6443"), "apiserver.example:6443");
  EXPECT_EQ(host_port("::1", "10261"), "[::1]:10261");
  EXPECT_EQ(host_port("fd00::a", "443"), "[fd00::a]:443");
}

}  // namespace
}  // namespace yurthub::base
