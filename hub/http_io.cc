// Hop-by-hop header handling; see http_io.h.
#include "hub/http_io.h"

#include <iterator>
#include <string>

#include <boost/algorithm/string/predicate.hpp>
#include <boost/beast/http/rfc7230.hpp>

namespace yurthub::hub {
namespace http = boost::beast::http;

bool is_upgrade_request(const http::fields& fields) {
  auto upgrade = fields.find(http::field::upgrade);
  if (upgrade == fields.end() || upgrade->value().empty()) return false;
  for (const auto token : http::token_list{fields[http::field::connection]}) {
    if (boost::algorithm::iequals(token, "upgrade")) return true;
  }
  return false;
}

void strip_hop_by_hop(http::fields& fields, bool keep_upgrade) {
  // One pass over the fields comparing known names as enums: erasing each hop-by-hop header by
  // name was seven lookups in the fields' tree for every request and response.
  const std::string connection(fields[http::field::connection]);  // erased below
  const http::token_list named{connection};
  for (auto it = fields.begin(); it != fields.end();) {
    bool drop = false;
    switch (it->name()) {
      case http::field::connection:
      case http::field::upgrade:
        drop = !keep_upgrade;
        break;
      case http::field::keep_alive:
      case http::field::proxy_connection:
      case http::field::proxy_authorization:
      case http::field::te:
      case http::field::trailer:
        drop = true;
        break;
      case http::field::content_length:
      case http::field::transfer_encoding:
        // The body is framed by these, and the next hop reads it by them: dropped because the
        // Connection header names them, the body would be read as the next request on the
        // apiserver's connection (request smuggling). Go's proxy keeps the framing apart too.
        break;
      default:
        for (const auto token : named) {
          if (boost::algorithm::iequals(token, it->name_string())) {
            drop = !(keep_upgrade && boost::algorithm::iequals(token, "upgrade"));
            break;
          }
        }
    }
    it = drop ? fields.erase(it) : std::next(it);
  }
}

}  // namespace yurthub::hub
