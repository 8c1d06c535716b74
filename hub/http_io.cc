// Hop-by-hop header handling; see http_io.h.
#include "hub/http_io.h"

#include <vector>

#include <boost/algorithm/string/predicate.hpp>

namespace yurthub::hub {
namespace http = boost::beast::http;

namespace {

// Splits a comma-separated header value into trimmed tokens.
std::vector<std::string> tokens(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    auto comma = value.find(',');
    std::string_view token = value.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (!token.empty()) out.emplace_back(token);
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
  }
  return out;
}

}  // namespace

bool is_upgrade_request(const http::fields& fields) {
  auto upgrade = fields.find(http::field::upgrade);
  if (upgrade == fields.end() || upgrade->value().empty()) return false;
  for (const auto& token : tokens(fields[http::field::connection])) {
    if (boost::algorithm::iequals(token, "upgrade")) return true;
  }
  return false;
}

void strip_hop_by_hop(http::fields& fields, bool keep_upgrade) {
  for (const auto& named : tokens(fields[http::field::connection])) {
    if (keep_upgrade && boost::algorithm::iequals(named, "upgrade")) continue;
    fields.erase(named);
  }
  if (!keep_upgrade) {
    fields.erase(http::field::connection);
    fields.erase(http::field::upgrade);
  }
  fields.erase(http::field::keep_alive);
  fields.erase(http::field::proxy_connection);
  fields.erase(http::field::proxy_authorization);
  fields.erase(http::field::te);
  fields.erase(http::field::trailer);
}

}  // namespace yurthub::hub
