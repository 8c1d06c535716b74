// Which field selectors kube-apiserver v1.26 accepts per resource (the field label conversion
// functions each API group registers, pkg/apis/*/v1/conversion.go; every other kind gets
// runtime.DefaultMetaV1FieldSelectorConversion: metadata.name and metadata.namespace only). The
// offline path asks this so that a selector the apiserver would refuse gets its 400 offline too,
// not a list filtered on a field the cloud never filters on. Pure; used by LocalProxy.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kube/selector.h"

namespace yurthub::kube {

// The apiserver's message for the first field of `selector` that `group`/`resource` does not
// support ("field label not supported: spec.bogus", or for kinds without their own conversion
// `"spec.bogus" is not a known field selector: only "metadata.name", "metadata.namespace"`);
// nullopt when every field is supported.
std::optional<std::string> unsupported_field_label(std::string_view group,
                                                   std::string_view resource,
                                                   const FieldSelector& selector);

}  // namespace yurthub::kube
