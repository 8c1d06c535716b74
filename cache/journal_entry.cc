// JournalEntry <-> JSON (see journal_entry.h). Called by the journal, its replay and the CLI.
#include "cache/journal_entry.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/base64.h"
#include "base/json_parse.h"

namespace yurthub::cache {
namespace {

constexpr int kEntryVersion = 1;

// The string members, in one table so encoding and decoding cannot drift apart.
constexpr std::pair<const char*, std::string JournalEntry::*> kStrings[] = {
    {"method", &JournalEntry::method},
    {"target", &JournalEntry::target},
    {"contentType", &JournalEntry::content_type},
    {"userAgent", &JournalEntry::user_agent},
    {"component", &JournalEntry::component},
    {"authorization", &JournalEntry::authorization},
    {"object", &JournalEntry::object},
    {"base", &JournalEntry::base},
};

// A protobuf body is binary: it is kept in base64 ("bodyBase64": true), a JSON body as text.
bool binary_body(const JournalEntry& entry) {
  return entry.content_type.starts_with("application/vnd.kubernetes.protobuf");
}

}  // namespace

std::string encode_journal_entry(const JournalEntry& entry) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("v");
  w.Int(kEntryVersion);
  w.Key("created");
  w.Int64(entry.created_unix);
  w.Key("baseResourceVersion");
  w.Uint64(entry.base_resource_version);
  for (const auto& [name, member] : kStrings) {
    const std::string& value = entry.*member;
    w.Key(name);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  }
  w.Key("body");
  if (binary_body(entry)) {
    const std::string encoded = base::encode_base64(entry.body);
    w.String(encoded.data(), static_cast<rapidjson::SizeType>(encoded.size()));
    w.Key("bodyBase64");
    w.Bool(true);
  } else {
    w.String(entry.body.data(), static_cast<rapidjson::SizeType>(entry.body.size()));
  }
  if (!entry.privileged_peer) {  // absent in entries written before peers were told apart
    w.Key("unprivilegedPeer");
    w.Bool(true);
  }
  w.EndObject();
  return {out.GetString(), out.GetSize()};
}

std::optional<JournalEntry> decode_journal_entry(std::uint64_t seq, std::string_view bytes) {
  rapidjson::Document doc;
  if (!base::parse_json(bytes, doc) || !doc.IsObject()) return std::nullopt;
  auto v = doc.FindMember("v");
  if (v == doc.MemberEnd() || !v->value.IsInt() || v->value.GetInt() != kEntryVersion) {
    return std::nullopt;
  }
  JournalEntry entry;
  entry.seq = seq;
  auto created = doc.FindMember("created");
  auto base_rv = doc.FindMember("baseResourceVersion");
  if (created == doc.MemberEnd() || !created->value.IsInt64() || base_rv == doc.MemberEnd() ||
      !base_rv->value.IsUint64()) {
    return std::nullopt;
  }
  entry.created_unix = created->value.GetInt64();
  entry.base_resource_version = base_rv->value.GetUint64();
  for (const auto& [name, member] : kStrings) {
    auto it = doc.FindMember(name);
    if (it == doc.MemberEnd() || !it->value.IsString()) return std::nullopt;
    entry.*member = std::string(it->value.GetString(), it->value.GetStringLength());
  }
  auto body = doc.FindMember("body");
  if (body == doc.MemberEnd() || !body->value.IsString()) return std::nullopt;
  std::string_view text(body->value.GetString(), body->value.GetStringLength());
  auto base64 = doc.FindMember("bodyBase64");
  if (base64 != doc.MemberEnd() && base64->value.IsBool() && base64->value.GetBool()) {
    auto decoded = base::decode_base64(text);  // padded, as encode_journal_entry writes it
    if (!decoded) return std::nullopt;
    entry.body = std::move(decoded).value();
  } else {
    entry.body = std::string(text);
  }
  auto unprivileged = doc.FindMember("unprivilegedPeer");
  entry.privileged_peer = !(unprivileged != doc.MemberEnd() && unprivileged->value.IsBool() &&
                            unprivileged->value.GetBool());
  return entry;
}

}  // namespace yurthub::cache
