// The request head checks of Forwarder::prepare (hub/request_head.h): the one pass finds each
// header it acts on whatever its case and wherever it sits, and finds nothing in a plain GET;
// the borrowed-identity strip drops Authorization and every Impersonate-* header and nothing else.
#include "hub/request_head.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/beast/http.hpp>

namespace yurthub::hub {
namespace {

namespace http = boost::beast::http;

net::ArenaFields fields_of(net::HeaderArena& arena,
                           const std::vector<std::pair<std::string, std::string>>& headers) {
  net::ArenaFields fields(arena.fresh());
  for (const auto& [name, value] : headers) fields.insert(name, value);
  return fields;
}

TEST(RequestHead, APlainGetCarriesNoneOfTheHeadersPrepareActsOn) {
  net::HeaderArena arena;
  const auto fields = fields_of(arena, {{"Host", "127.0.0.1:10261"},
                                        {"User-Agent", "kubelet/v1.26.0"},
                                        {"Accept", "application/json"},
                                        {"Accept-Encoding", "gzip"}});
  const RequestHeadFields has = scan_request_fields(fields);
  EXPECT_FALSE(has.connection || has.upgrade || has.authorization || has.replay ||
               has.impersonation);
}

TEST(RequestHead, FindsEachHeaderWhateverItsCase) {
  struct Case {
    std::string name;
    bool RequestHeadFields::*flag;
  };
  const Case cases[] = {
      {"connection", &RequestHeadFields::connection},
      {"UPGRADE", &RequestHeadFields::upgrade},
      {"Authorization", &RequestHeadFields::authorization},
      {"x-yurthub-replay", &RequestHeadFields::replay},
      {"Impersonate-User", &RequestHeadFields::impersonation},
      {"impersonate-extra-scopes", &RequestHeadFields::impersonation},
      {"IMPERSONATE-GROUP", &RequestHeadFields::impersonation},
  };
  for (const Case& c : cases) {
    net::HeaderArena arena;
    const auto fields =
        fields_of(arena, {{"Host", "hub"}, {c.name, "x"}, {"User-Agent", "kubectl/v1.26.0"}});
    EXPECT_TRUE(scan_request_fields(fields).*c.flag) << c.name;
  }
  net::HeaderArena arena;
  const auto near_miss = fields_of(arena, {{"Impersonate", "x"}, {"X-Yurthub-Replayed", "x"}});
  const RequestHeadFields has = scan_request_fields(near_miss);
  EXPECT_FALSE(has.impersonation || has.replay);
}

TEST(RequestHead, TheBorrowedIdentityStripDropsAuthorizationAndImpersonationOnly) {
  net::HeaderArena arena;
  auto fields = fields_of(arena, {{"Authorization", "Bearer abc"},
                                  {"Impersonate-User", "system:admin"},
                                  {"impersonate-group", "system:masters"},
                                  {"Impersonate-Uid", "1"},
                                  {"User-Agent", "curl/8.0"},
                                  {"Impersonated", "kept"}});
  strip_borrowed_identity(fields);
  std::vector<std::string> left;
  for (const auto& field : fields) left.emplace_back(field.name_string());
  EXPECT_EQ(left, (std::vector<std::string>{"User-Agent", "Impersonated"}));
}

}  // namespace
}  // namespace yurthub::hub
