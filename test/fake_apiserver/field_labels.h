// The apiserver's field selector support per resource (v1.26): which fields each kind's field
// label conversion function accepts (pkg/apis/core/v1/conversion.go and friends; kinds without
// one take only metadata.name and metadata.namespace, custom resources metadata.name and, when
// namespaced, metadata.namespace), and the value each field has for an object (the kinds'
// ToSelectableFields). Used by FieldSelector (field_selector.cc). Pure.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::fake {

struct ResourceInfo;

// The field `resource` selects `field` by (the legacy pods "spec.host" is "spec.nodeName"), or
// the apiserver's 400 message: "field label not supported: <field>" from kinds with their own
// conversion, `"<field>" is not a known field selector: only "metadata.name",
// "metadata.namespace"` from the others.
Result<std::string> convert_field_label(const ResourceInfo& resource, std::string_view field);

// The value of `field` in `object` as the apiserver's field set holds it: "" when absent, a
// boolean as "true"/"false" (spec.unschedulable absent is "false"), status.podIP as the first of
// status.podIPs, a core Event's source as source.component (else reportingComponent).
std::string field_value(const rapidjson::Value& object, std::string_view field);

}  // namespace yurthub::fake
