// The request head checks of Forwarder::prepare; see request_head.h.
#include "hub/request_head.h"

#include <iterator>
#include <string_view>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>

#include "hub/hooks/cache_hooks.h"
#include "net/http_io.h"

namespace yurthub::hub {
namespace http = boost::beast::http;

namespace {

constexpr std::string_view kImpersonatePrefix = "impersonate-";

bool names_impersonation(boost::beast::string_view name) {
  return net::istarts_with({name.data(), name.size()}, kImpersonatePrefix);
}

}  // namespace

RequestHeadFields scan_request_fields(const net::ArenaFields& fields) {
  RequestHeadFields found;
  for (const auto& field : fields) {
    switch (field.name()) {
      case http::field::connection:
        found.connection = true;
        break;
      case http::field::upgrade:
        found.upgrade = true;
        break;
      case http::field::authorization:
        found.authorization = true;
        break;
      default: {
        const auto name = field.name_string();
        if (boost::beast::iequals(name, kReplayHeader)) found.replay = true;
        if (names_impersonation(name)) found.impersonation = true;
      }
    }
  }
  return found;
}

bool names_framing_in_connection(const net::ArenaFields& fields) {
  const auto it = fields.find(http::field::connection);
  if (it == fields.end()) return false;
  for (const auto token : http::token_list{it->value()}) {
    for (std::string_view name : {"content-length", "transfer-encoding", "host", "authorization"}) {
      if (boost::beast::iequals(token, name)) return true;
    }
  }
  return false;
}

void strip_borrowed_identity(net::ArenaFields& fields) {
  for (auto it = fields.begin(); it != fields.end();) {
    const bool drop =
        it->name() == http::field::authorization || names_impersonation(it->name_string());
    it = drop ? fields.erase(it) : std::next(it);
  }
}

}  // namespace yurthub::hub
