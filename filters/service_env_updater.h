// serviceenvupdater: rewrites the KUBERNETES_SERVICE_HOST/PORT env entries that a Pod spec sets
// explicitly, so those containers also reach the apiserver through this hub
// (docs/reference/yurthub.md §6.8). Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "serviceenvupdater": core v1 pods, get, list and watch. In spec.containers (not
// initContainers), env entries named KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT get value
// hub_host / hub_port; entries are never added. Ready once hub_host is known. Stateless;
// thread-safe.
//
// may_change() is true only when the text holds KUBERNETES_SERVICE_HOST or
// KUBERNETES_SERVICE_PORT, so the chain passes almost every pod on unparsed. Sound because the
// text is written by Go's encoding/json (the apiserver's JSON, which the hub asks for when it
// filters; kept as is in the caches) or by RapidJSON's writer (an object the hub re-serialized).
// encoding/json escapes only control characters, '"', backslash and (HTML-safe) <, >, &, U+2028,
// U+2029; RapidJSON only control characters, '"' and backslash: never a letter or '_', so an env
// name that decodes to KUBERNETES_SERVICE_HOST is spelled so in the text. A pod that cannot be
// parsed was passed on unchanged before too; without the names it is now not parsed at all, so
// node_yurthub_filter_parse_failures_total no longer counts it (it is counted as seen instead).
std::unique_ptr<ObjectFilter> make_service_env_updater_filter();

}  // namespace yurthub::filters
