// Which field selectors kube-apiserver v1.26 accepts per resource (the field label conversion
// functions each API group registers, pkg/apis/*/v1/conversion.go; every other kind gets
// runtime.DefaultMetaV1FieldSelectorConversion: metadata.name and metadata.namespace only), and
// the value each selectable field has on an object (the field sets of pkg/registry/*/strategy.go).
// The offline path asks this so that a selector the apiserver would refuse gets its 400 offline
// too, and one it takes selects what the cloud would. Pure; used by LocalProxy and FieldSelector.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "kube/selector.h"

namespace yurthub::kube {

// The apiserver's message for the first field of `selector` that `group`/`resource` does not
// support ("field label not supported: spec.bogus", or for kinds without their own conversion
// `"spec.bogus" is not a known field selector: only "metadata.name", "metadata.namespace"`);
// nullopt when every field is supported.
std::optional<std::string> unsupported_field_label(std::string_view group,
                                                   std::string_view resource,
                                                   const FieldSelector& selector);

// The text field `path` has on `object` (v1 JSON) of `group`/`resource` in the apiserver's field
// set for that kind (NodeToSelectableFields, pod ToSelectableFields... in v1.26), which is what a
// field selector compares. Where the field set derives a value it is derived here: a boolean or
// integer field that is absent counts as its Go zero value ("false", "0"), pods' status.podIP is
// the first of status.podIPs, spec.host is spec.nodeName, jobs' status.successful is
// status.succeeded. Any other path is the JSON member at that dotted path: a string as is,
// missing or null as "", booleans and numbers by their JSON text, objects and arrays by their
// compact JSON text.
std::string selectable_field(std::string_view group, std::string_view resource,
                             const rapidjson::Value& object, std::string_view path);

}  // namespace yurthub::kube
