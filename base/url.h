// URL helpers for requests the hub makes itself (the net::Informer's list and watch, the loopback
// client, Host headers). Query keys and values are percent-encoded by Boost.URL; the hub reads
// its clients' queries with kube::for_each_query_param. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace yurthub::base {

// Appends `key=value` to `target`, preceded by '?' if `target` has no query yet and by '&'
// otherwise. Every byte of `key` and `value` but RFC 3986's unreserved characters
// (ALPHA DIGIT - . _ ~) is percent-encoded, a space as "%20", as Go's url.QueryEscape does but for
// the space: whatever a selector holds, Go's url.ParseQuery (the apiserver) and
// kube::for_each_query_param read it back unchanged.
void append_query_param(std::string& target, std::string_view key, std::string_view value);

// "host:port" for a Host header or a URL authority, with an IPv6 literal in brackets
// ("[::1]:10261"; RFC 3986 §3.2.2). `host` is a name or an IP literal without brackets.
std::string host_port(std::string_view host, std::string_view port);

}  // namespace yurthub::base
