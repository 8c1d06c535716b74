// URL helpers for requests the hub makes itself (the net::Informer's list and watch): the encode
// side of request_info.h's kube::percent_decode. Pure functions; thread-safe.
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

}  // namespace yurthub::base
