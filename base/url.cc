// URL helpers; see url.h.
#include "base/url.h"

namespace yurthub::base {

namespace {

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_unreserved(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0F]);
    }
  }
  return out;
}

void append_query_param(std::string& target, std::string_view key, std::string_view value) {
  target.push_back(target.find('?') == std::string::npos ? '?' : '&');
  target += percent_encode(key);
  target.push_back('=');
  target += percent_encode(value);
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
