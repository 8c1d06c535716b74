// A minimal OpenAPI v3 discovery (/openapi/v3 and /openapi/v3/<api|apis/g>/<v>) built from the
// resource table. It carries just what kubectl's field-validation check reads (client-go
// resource.QueryParamVerifierV3): one PATCH operation per resource, tagged with its
// x-kubernetes-group-version-kind and a `fieldValidation` query parameter. Without it `kubectl
// apply` fails ("failed to download openapi") unless run with --validate=false: with
// /openapi/v3 missing it falls back to /openapi/v2, which this fake does not serve. No schemas:
// kubectl then computes apply patches from its compiled-in types. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace yurthub::fake {

// The document at `path` (no query), or nullopt for any other path.
std::optional<std::string> openapi_v3_document(std::string_view path);

}  // namespace yurthub::fake
