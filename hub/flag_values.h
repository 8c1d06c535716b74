// The values of the hub's flags as YurtHub's Go command line reads them (pflag's lists,
// strconv.ParseBool, time.ParseDuration) and the checks of the addresses and names the flags
// carry. Pure. Called by hub/options.cc's flag table, and by the certificate manager to compare a
// kubeconfig's server with --server-addr.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace yurthub::hub {

struct ServerAddress {
  std::string url;   // as given, normalised to "https://host:port"
  std::string host;  // host name or IP literal (IPv6 without brackets)
  std::string port;  // defaults to "443" when the URL has none
};

inline constexpr int kMaxPort = 65535;

// `s` in double quotes, for error messages.
std::string quote(std::string_view s);
// `s` without surrounding spaces, tabs and line ends.
std::string_view trim(std::string_view s);
// A comma list, each entry trimmed; "" gives one empty entry.
std::vector<std::string_view> split_commas(std::string_view s);
// Go's strconv.ParseBool, which pflag uses for bool flags.
std::optional<bool> parse_bool(std::string_view s);
// A decimal int, with an optional '+'; nullopt for anything else or out of range.
std::optional<int> parse_int(std::string_view s);

// One --server-addr entry, or a kubeconfig's cluster server: [https://]host[:port][/], the port
// defaulting to 443. YurtHub rejects every scheme but https.
Result<ServerAddress> parse_server_address(std::string_view entry);

// Parses a Go duration ("40s", "1m30s", "1800s", "2h", "500ms"); whole seconds, rounded down.
Result<std::chrono::seconds> parse_go_duration(std::string_view text);

// YurtHub's verifyDummyIP for IPv4 (inside 169.254.0.0/16, outside the reserved 169.254.31.0/24
// and 169.254.1.1); an IPv6 address is taken as given. The error is the reason only.
Status check_dummy_if_ip(std::string_view value);
// An IPv4 or IPv6 address, or "".
Status check_ip_or_empty(std::string_view value);
// A name the kernel takes for a network interface (its dev_valid_name()).
Status check_interface_name(std::string_view value);

}  // namespace yurthub::hub
