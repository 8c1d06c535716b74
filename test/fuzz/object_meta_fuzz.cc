// Fuzz target for kube/object_meta.h, which reads namespace, name and resourceVersion of every
// object the apiserver sends through a cache tap (each list item, each watch event) and of the
// objects the pool's shared cache keeps. Oracles: object_meta() (which parses the first KiB on
// the stack first) always agrees with object_meta_of_whole_copy(); and for a text that parses as
// a JSON object whose one `metadata` member is an object naming each of the three at most once,
// it returns exactly what a full parse reads there (a string's value; resourceVersion through
// parse_resource_version). The input is also read with 1 KiB of padding in front of its
// metadata, so the head's edge falls inside every part of it. And marks_initial_events_end()
// (kube/watch_list.h) on the same text: true only where the annotation is named.
#include <string>

#include "base/json_parse.h"
#include "kube/object_meta.h"
#include "kube/watch_list.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

bool same(const std::optional<kube::ObjectMeta>& a, const std::optional<kube::ObjectMeta>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->namespace_name == b->namespace_name && a->name == b->name &&
                a->resource_version == b->resource_version);
}

// What a full parse says object_meta() must return, when the text is plain enough to say.
std::optional<kube::ObjectMeta> expected(std::string_view text, bool& known) {
  known = false;
  rapidjson::Document doc;
  if (!base::parse_json(text, doc) || !doc.IsObject()) return std::nullopt;
  int metadata_members = 0;
  const rapidjson::Value* metadata = nullptr;
  for (const auto& member : doc.GetObject()) {
    if (std::string_view(member.name.GetString(), member.name.GetStringLength()) != "metadata")
      continue;
    ++metadata_members;
    metadata = &member.value;
  }
  if (metadata_members != 1 || !metadata->IsObject()) return std::nullopt;
  kube::ObjectMeta meta;
  int seen[3] = {0, 0, 0};
  for (const auto& member : metadata->GetObject()) {
    const std::string_view key(member.name.GetString(), member.name.GetStringLength());
    const int which = key == "namespace"         ? 0
                      : key == "name"            ? 1
                      : key == "resourceVersion" ? 2
                                                 : -1;
    if (which < 0) continue;
    if (++seen[which] > 1) return std::nullopt;  // a repeated member: object_meta reads the first
    if (!member.value.IsString()) continue;
    const std::string value(member.value.GetString(), member.value.GetStringLength());
    if (which == 0) meta.namespace_name = value;
    if (which == 1) meta.name = value;
    if (which == 2) meta.resource_version = kube::parse_resource_version(value);
  }
  known = true;
  return meta;
}

void check_one(std::string_view text) {
  const auto meta = kube::object_meta(text);
  fuzz::check(same(meta, kube::object_meta_of_whole_copy(text)),
              "object_meta and the whole copy's parse disagree");
  bool known = false;
  const auto full = expected(text, known);
  if (known) fuzz::check(same(meta, full), "object_meta differs from a full parse");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = fuzz::as_text(data, size);
  check_one(in);
  // kube/watch_list.h reads every BOOKMARK's object for the end of a streaming list's initial
  // events: it must name the annotation, and its own bookmark must say it does.
  if (kube::marks_initial_events_end(in)) {
    fuzz::check(in.find(kube::kInitialEventsEndAnnotation) != std::string_view::npos,
                "an end of initial events without the annotation");
  }
  // The same object with a member of ~1 KiB before it, so the first KiB ends in its metadata.
  const std::size_t pad = in.empty() ? 0 : static_cast<unsigned char>(in[0]) % 64;
  if (in.size() > 1 && in[0] == '{') {
    std::string padded = "{\"p\":\"" + std::string(1000 + pad, 'x') + "\",";
    padded.append(in.substr(1));
    check_one(padded);
  }
  return 0;
}
