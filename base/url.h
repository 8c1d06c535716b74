// URL helpers for requests the hub makes itself (the net::Informer's list and watch, the loopback
// client, Host headers): the encode side of request_info.h's kube::percent_decode. Pure
// functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace yurthub::base {

// Percent-encodes every byte of `text` except RFC 3986 unreserved characters (ALPHA DIGIT - . _ ~),
// so the result is safe as a query parameter key or value. A space becomes "%20", which both
// Go's url.ParseQuery and kube::percent_decode(..., true) read back as a space.
std::string percent_encode(std::string_view text);

// Appends `key=value` (both percent-encoded) to `target`, preceded by '?' if `target` has no query
// yet and by '&' otherwise.
void append_query_param(std::string& target, std::string_view key, std::string_view value);

// "host:port" for a Host header or a URL authority, with an IPv6 literal in brackets
// ("[::1]:10261"; RFC 3986 §3.2.2). `host` is a name or an IP literal without brackets.
std::string host_port(std::string_view host, std::string_view port);

}  // namespace yurthub::base
