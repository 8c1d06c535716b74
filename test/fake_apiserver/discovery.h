// Discovery documents built from the resource table (resources.h), in the legacy (non-aggregated)
// formats a v1.26 apiserver serves: APIVersions at /api, APIResourceList at /api/v1 and
// /apis/<group>/<version>, APIGroupList at /apis, APIGroup at /apis/<group>. kubectl 1.32 asks
// for aggregated discovery first and falls back when it gets application/json. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace yurthub::fake {

// The discovery document at `path` (no query), or nullopt if `path` is not a discovery path this
// server knows. `server_address` ("127.0.0.1:6443") goes into /api's serverAddressByClientCIDRs.
std::optional<std::string> discovery_document(std::string_view path,
                                              std::string_view server_address);

// GET /version: a v1.26.1 version.Info, indented as the apiserver always writes it.
const std::string& version_body();

}  // namespace yurthub::fake
