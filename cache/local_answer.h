// The pieces of a list or watch answered on the node rather than by the apiserver, shared by the
// two places that answer one: the offline LocalProxy (from LMDB) and the pool's shared watch
// cache (pool/shared_serving.h, from memory). Both write through a hub::ResponseWriter, with the
// apiserver's Status errors, selectors refused as it refuses them, its list envelope, its watch
// timeouts and its BOOKMARK events.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "hub/hooks/cache_hooks.h"
#include "kube/request_info.h"
#include "kube/status.h"

namespace yurthub::cache {

// Why the apiserver would refuse the request's label or field selector (a 400), nullopt if it
// would take them.
std::optional<std::string> invalid_selector(const kube::RequestInfo& info);

// Answers with the Status of `failure` (kube/status.h). Returns the code sent, 0 if the client
// left.
boost::asio::awaitable<unsigned> send_api_error(hub::ResponseWriter& out, kube::Failure failure,
                                                const std::string& detail);
// Answers with `error`'s Status. Returns the code sent, 0 if the client left.
boost::asio::awaitable<unsigned> send_status(hub::ResponseWriter& out, const kube::ApiError& error);
// Answers 200 with one JSON document.
boost::asio::awaitable<unsigned> send_json(hub::ResponseWriter& out, unsigned code,
                                           std::string body);

// `s` as a JSON string literal.
std::string quoted(std::string_view s);

// The start of a list, up to and with `"items":[`: kind, apiVersion, resourceVersion and, when
// there is more, the continue token.
std::string list_head(std::string_view list_kind, std::string_view api_version,
                      std::uint64_t resource_version, std::string_view continue_token = {});

// When a watch ends: after its timeoutSeconds, else after a random time in
// [min_request_timeout, 2 x min_request_timeout), as the apiserver does.
std::chrono::steady_clock::time_point watch_deadline(const kube::RequestInfo& info,
                                                     std::chrono::seconds min_request_timeout);

// A BOOKMARK event (with its newline) at `resource_version`.
std::string bookmark_event(std::string_view kind, std::string_view api_version,
                           std::uint64_t resource_version);

}  // namespace yurthub::cache
