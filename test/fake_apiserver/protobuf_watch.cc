// Protobuf watch frames; see protobuf_watch.h.
#include "test/fake_apiserver/protobuf_watch.h"

#include <cstdint>

#include <rapidjson/document.h>

namespace yurthub::fake {
namespace {

void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// A length-delimited field (wire type 2): a string, bytes or an embedded message.
void field(std::string& out, unsigned number, std::string_view bytes) {
  varint(out, (number << 3) | 2);
  varint(out, bytes.size());
  out.append(bytes);
}

std::string string_member(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// map<string, string> entries of ObjectMeta's labels (11) or annotations (12).
void string_map(std::string& out, unsigned number, const rapidjson::Value& meta, const char* name) {
  auto it = meta.FindMember(name);
  if (it == meta.MemberEnd() || !it->value.IsObject()) return;
  for (const auto& entry : it->value.GetObject()) {
    if (!entry.value.IsString()) continue;
    std::string pair;
    field(pair, 1, entry.name.GetString());
    field(pair, 2, entry.value.GetString());
    field(out, number, pair);
  }
}

std::string object_meta(const rapidjson::Value& meta) {
  std::string out;
  if (!meta.IsObject()) return out;
  field(out, 1, string_member(meta, "name"));
  field(out, 3, string_member(meta, "namespace"));
  field(out, 5, string_member(meta, "uid"));
  field(out, 6, string_member(meta, "resourceVersion"));
  string_map(out, 11, meta, "labels");
  string_map(out, 12, meta, "annotations");
  return out;
}

}  // namespace

bool wants_protobuf_watch(std::string_view accept) {
  bool protobuf = false;
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);
    range = range.substr(0, range.find(';'));
    while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
    while (!range.empty() && range.back() == ' ') range.remove_suffix(1);
    if (range == "application/vnd.kubernetes.protobuf")
      protobuf = true;
    else if (range == "application/json" || range == "*/*" || range == "application/*")
      return false;
  }
  return protobuf;
}

std::string protobuf_watch_frame(std::string_view kind, std::string_view api_version,
                                 const std::string& event_json) {
  rapidjson::Document doc;
  doc.Parse(event_json.c_str());
  std::string type;
  std::string kind_message;
  if (!doc.HasParseError() && doc.IsObject()) {
    type = string_member(doc, "type");
    auto object = doc.FindMember("object");
    if (type == "ERROR") {
      kind = "Status";
      api_version = "v1";
    } else if (object != doc.MemberEnd() && object->value.IsObject() &&
               object->value.HasMember("metadata")) {
      field(kind_message, 1, object_meta(object->value["metadata"]));
    }
  }
  std::string type_meta;
  field(type_meta, 1, api_version);
  field(type_meta, 2, kind);
  std::string unknown;
  field(unknown, 1, type_meta);
  field(unknown, 2, kind_message);
  field(unknown, 3, "");
  field(unknown, 4, "");
  std::string raw_extension;
  field(raw_extension, 1, std::string("k8s\0", 4) + unknown);
  std::string event;
  field(event, 1, type);
  field(event, 2, raw_extension);
  std::string frame;
  const auto n = static_cast<std::uint32_t>(event.size());
  frame.push_back(static_cast<char>(n >> 24));
  frame.push_back(static_cast<char>((n >> 16) & 0xff));
  frame.push_back(static_cast<char>((n >> 8) & 0xff));
  frame.push_back(static_cast<char>(n & 0xff));
  return frame + event;
}

}  // namespace yurthub::fake
