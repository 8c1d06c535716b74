// Flag values and address checks; see flag_values.h.
#include "hub/flag_values.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <utility>

#include "base/url.h"

namespace yurthub::hub {

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const auto comma = s.find(',', start);
    out.push_back(trim(s.substr(start, comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

// Go's strconv.ParseBool, which pflag uses for bool flags.
std::optional<bool> parse_bool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "true", "TRUE", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "false", "FALSE", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

std::optional<int> parse_int(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

namespace {

bool is_ipv6_char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.' || c == '%';
}

bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

// Splits "host[:port]" or "[v6][:port]" into host and port ("443" when absent).
Result<ServerAddress> split_host_port(std::string_view authority) {
  ServerAddress addr;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return make_error("unterminated IPv6 literal");
    addr.host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return make_error("unexpected text after ']'");
    if (!rest.empty()) port = rest.substr(1);
    if (addr.host.empty() || !std::all_of(addr.host.begin(), addr.host.end(), is_ipv6_char)) {
      return make_error("bad IPv6 literal [" + addr.host + "]");
    }
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) != authority.npos) {
      return make_error("an IPv6 address must be in brackets, e.g. https://[::1]:6443");
    }
    addr.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (addr.host.empty()) return make_error("missing host");
    if (!std::all_of(addr.host.begin(), addr.host.end(), is_host_char)) {
      return make_error("bad host " + quote(addr.host));
    }
  }
  const auto port_number = parse_int(port);
  if (!port.empty() &&
      (!port_number || *port_number < 1 || *port_number > kMaxPort || port.front() == '+')) {
    return make_error("bad port " + quote(port));
  }
  addr.port = port.empty() ? "443" : std::to_string(*port_number);
  return addr;
}

}  // namespace

Result<ServerAddress> parse_server_address(std::string_view entry) {
  std::string_view rest = entry;
  if (const auto sep = rest.find("://"); sep != std::string_view::npos) {
    std::string scheme(rest.substr(0, sep));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme != "https") {
      return make_error("scheme " + quote(scheme) + " is not supported (only https)");
    }
    rest.remove_prefix(sep + 3);
  }
  const auto slash = rest.find('/');
  if (slash != std::string_view::npos && rest.substr(slash) != "/") {
    return make_error("a path is not supported");
  }
  const std::string_view authority = rest.substr(0, slash);
  if (authority.find_first_of("@?#") != std::string_view::npos) {
    return make_error("user info, query and fragment are not supported");
  }
  auto addr = split_host_port(authority);
  if (!addr) return addr;
  addr->url = "https://" + base::host_port(addr->host, addr->port);
  return addr;
}

namespace {

// Nanoseconds per unit, as Go's time.ParseDuration spells them.
std::optional<std::uint64_t> unit_nanos(std::string_view unit) {
  static constexpr std::pair<std::string_view, std::uint64_t> kUnits[] = {
      {"ns", 1},
      {"us", 1'000},
      {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
      {"\xCE\xBCs", 1'000},  // U+03BC Greek small letter mu
      {"ms", 1'000'000},
      {"s", 1'000'000'000},
      {"m", 60'000'000'000},
      {"h", 3'600'000'000'000},
  };
  for (const auto& [name, nanos] : kUnits) {
    if (unit == name) return nanos;
  }
  return std::nullopt;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::chrono::seconds> parse_go_duration(std::string_view text) {
  const std::string bad = "invalid duration " + quote(text);
  std::string_view s = text;
  if (!s.empty() && s.front() == '-') return make_error(bad + ": negative");
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s == "0") return std::chrono::seconds{0};
  if (s.empty()) return make_error(bad);
  using U128 = unsigned __int128;
  const U128 kLimit = static_cast<U128>(INT64_MAX);  // Go's Duration is int64 nanoseconds
  U128 total = 0;
  while (!s.empty()) {
    // [0-9]*(\.[0-9]*)?[a-z]+ with at least one digit.
    U128 whole = 0, frac = 0, scale = 1;
    std::size_t i = 0, digits = 0;
    for (; i < s.size() && is_digit(s[i]); ++i, ++digits) {
      whole = whole * 10 + static_cast<unsigned>(s[i] - '0');
      if (whole > kLimit) return make_error(bad + ": overflow");
    }
    if (i < s.size() && s[i] == '.') {
      for (++i; i < s.size() && is_digit(s[i]); ++i, ++digits) {
        if (scale < static_cast<U128>(1'000'000'000'000'000'000ULL)) {  // Go also drops the rest
          frac = frac * 10 + static_cast<unsigned>(s[i] - '0');
          scale *= 10;
        }
      }
    }
    if (digits == 0) return make_error(bad);
    std::size_t unit_end = i;
    while (unit_end < s.size() && s[unit_end] != '.' && !is_digit(s[unit_end])) ++unit_end;
    if (unit_end == i) return make_error(bad + ": missing unit");
    const auto nanos = unit_nanos(s.substr(i, unit_end - i));
    if (!nanos) return make_error(bad + ": unknown unit " + quote(s.substr(i, unit_end - i)));
    total += whole * *nanos + frac * *nanos / scale;
    if (total > kLimit) return make_error(bad + ": overflow");
    s.remove_prefix(unit_end);
  }
  return std::chrono::seconds{static_cast<std::int64_t>(total / 1'000'000'000)};
}

Status check_dummy_if_ip(std::string_view value) {
  const std::string text(value);
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) == 1) return {};
  if (inet_pton(AF_INET, text.c_str(), bytes) != 1) return make_error("not an IP address");
  if (bytes[0] != 169 || bytes[1] != 254) return make_error("not in 169.254.0.0/16");
  if (bytes[2] == 31) return make_error("in the reserved 169.254.31.0/24");
  if (bytes[2] == 1 && bytes[3] == 1) return make_error("169.254.1.1 is reserved");
  return {};
}

Status check_ip_or_empty(std::string_view value) {
  const std::string text(value);
  unsigned char bytes[16];
  if (!text.empty() && inet_pton(AF_INET, text.c_str(), bytes) != 1 &&
      inet_pton(AF_INET6, text.c_str(), bytes) != 1) {
    return make_error("not an IP address");
  }
  return {};
}

Status check_interface_name(std::string_view value) {
  if (value.empty() || value.size() > 15) return make_error("must be 1 to 15 bytes long");
  if (value == "." || value == ".." || value.find_first_of("/: \t\n\r\v\f") != value.npos) {
    return make_error("not an interface name");
  }
  return {};
}

}  // namespace yurthub::hub
