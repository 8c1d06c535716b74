// URL helpers; see url.h. host_port stays hand-written: Boost.URL brackets an IPv6 host only
// through a whole url object (url::set_host_address, then encoded_host_and_port), which costs a
// parse and an allocation for what is one find and a concatenation here.
#include "base/url.h"

#include <boost/url/encode.hpp>
#include <boost/url/grammar/string_token.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace yurthub::base {

namespace urls = boost::urls;

void append_query_param(std::string& target, std::string_view key, std::string_view value) {
  target.push_back(target.find('?') == std::string::npos ? '?' : '&');
  urls::encode(key, urls::unreserved_chars, {}, urls::string_token::append_to(target));
  target.push_back('=');
  urls::encode(value, urls::unreserved_chars, {}, urls::string_token::append_to(target));
}

std::string host_port(std::string_view host, std::string_view port) {
  std::string out;
  out.reserve(host.size() + port.size() + 3);
  const bool v6 = host.find(':') != std::string_view::npos;
  if (v6) out += '[';
  out += host;
  if (v6) out += ']';
  out += ':';
  out += port;
  return out;
}

}  // namespace yurthub::base
