// JSON helpers; see json_util.h.
#include "test/fake_apiserver/json_util.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include <rapidjson/error/en.h>

#include "base/base64.h"

namespace yurthub::fake {
namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

// Maximum nesting of arrays/objects accepted from clients; RapidJSON's writer (and the merge
// patch) recurse per level, so a 3 MiB body of `[[[[...` must be refused, not overflow the stack.
constexpr int kMaxDepth = 1000;

// True if `text` nests deeper than kMaxDepth (brackets inside strings do not count).
bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

Result<rapidjson::Document> parse_json(std::string_view text) {
  if (too_deep(text)) return make_error("JSON nested deeper than 1000 levels");
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc.HasParseError()) {
    return make_error(std::string(rapidjson::GetParseError_En(doc.GetParseError())) +
                      " at offset " + std::to_string(doc.GetErrorOffset()));
  }
  return doc;
}

bool json_equal(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (a.IsNumber() && b.IsNumber()) {
    if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
    if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
    return a.GetDouble() == b.GetDouble();
  }
  if (a.GetType() != b.GetType()) return false;
  if (a.IsString()) {
    return a.GetStringLength() == b.GetStringLength() &&
           std::string_view(a.GetString(), a.GetStringLength()) ==
               std::string_view(b.GetString(), b.GetStringLength());
  }
  if (a.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      if (!json_equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return false;
    for (const auto& m : a.GetObject()) {
      auto it = b.FindMember(m.name);
      if (it == b.MemberEnd() || !json_equal(m.value, it->value)) return false;
    }
    return true;
  }
  return a == b;  // null, true, false
}

std::string with_type_meta(std::string_view kind, std::string_view api_version,
                           std::string_view bare) {
  std::string out;
  out.reserve(bare.size() + kind.size() + api_version.size() + 32);
  out += "{\"kind\":\"";
  out += kind;
  out += "\",\"apiVersion\":\"";
  out += api_version;
  out += '"';
  if (bare.size() > 2) {
    out += ',';
    out.append(bare.substr(1));
  } else {
    out += '}';
  }
  return out;
}

rapidjson::Value& ensure_metadata(rapidjson::Document& obj) {
  auto it = obj.FindMember("metadata");
  if (it == obj.MemberEnd()) {
    obj.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), obj.GetAllocator());
    it = obj.FindMember("metadata");
  } else if (!it->value.IsObject()) {
    it->value.SetObject();
  }
  return it->value;
}

std::string meta_string(const rapidjson::Value& obj, const char* field) {
  if (!obj.IsObject()) return "";
  auto md = obj.FindMember("metadata");
  if (md == obj.MemberEnd() || !md->value.IsObject()) return "";
  auto f = md->value.FindMember(field);
  if (f == md->value.MemberEnd() || !f->value.IsString()) return "";
  return std::string(f->value.GetString(), f->value.GetStringLength());
}

void set_meta_string(rapidjson::Document& obj, const char* field, std::string_view value) {
  auto& alloc = obj.GetAllocator();
  rapidjson::Value& md = ensure_metadata(obj);
  rapidjson::Value v(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc);
  auto f = md.FindMember(field);
  if (f != md.MemberEnd()) {
    f->value = v;
  } else {
    md.AddMember(rapidjson::Value(field, alloc), v, alloc);
  }
}

void order_metadata(rapidjson::Document& obj) {
  auto md = obj.FindMember("metadata");
  if (md == obj.MemberEnd() || !md->value.IsObject()) return;
  // k8s.io/apimachinery/pkg/apis/meta/v1 ObjectMeta, in its declaration order.
  static constexpr const char* kOrder[] = {"name",
                                           "generateName",
                                           "namespace",
                                           "selfLink",
                                           "uid",
                                           "resourceVersion",
                                           "generation",
                                           "creationTimestamp",
                                           "deletionTimestamp",
                                           "deletionGracePeriodSeconds",
                                           "labels",
                                           "annotations",
                                           "ownerReferences",
                                           "finalizers",
                                           "managedFields"};
  auto& alloc = obj.GetAllocator();
  rapidjson::Value& from = md->value;
  rapidjson::Value ordered(rapidjson::kObjectType);
  for (const char* key : kOrder) {
    auto m = from.FindMember(key);
    if (m == from.MemberEnd()) continue;
    ordered.AddMember(m->name, m->value, alloc);  // moves both out
    from.EraseMember(m);                          // keeps the others in order
  }
  for (auto& m : from.GetObject()) ordered.AddMember(m.name, m.value, alloc);
  from = ordered;  // moves
}

void remove_meta(rapidjson::Document& obj, const char* field) {
  auto md = obj.FindMember("metadata");
  if (md != obj.MemberEnd() && md->value.IsObject()) md->value.EraseMember(field);
}

// EraseMember, not RemoveMember: RemoveMember moves the last member into the hole, which would
// reorder the object's fields on every write.
void strip_type_meta(rapidjson::Document& obj) {
  obj.EraseMember("kind");
  obj.EraseMember("apiVersion");
}

void copy_member(rapidjson::Document& to, const rapidjson::Value& from, const char* member) {
  auto it = from.FindMember(member);
  auto existing = to.FindMember(member);
  if (it == from.MemberEnd()) {
    if (existing != to.MemberEnd()) to.EraseMember(existing);
    return;
  }
  auto& alloc = to.GetAllocator();
  if (existing != to.MemberEnd()) {
    existing->value.CopyFrom(it->value, alloc);
  } else {
    to.AddMember(rapidjson::Value(member, alloc), rapidjson::Value(it->value, alloc), alloc);
  }
}

void merge_string_data(rapidjson::Document& secret) {
  auto sd = secret.FindMember("stringData");
  if (sd == secret.MemberEnd()) return;
  if (sd->value.IsObject() && sd->value.MemberCount() > 0) {
    auto& a = secret.GetAllocator();
    if (!secret.HasMember("data") || !secret["data"].IsObject()) {
      secret.RemoveMember("data");
      secret.AddMember("data", rapidjson::Value(rapidjson::kObjectType), a);
    }
    rapidjson::Value& data = secret["data"];
    for (const auto& m : secret["stringData"].GetObject()) {
      if (!m.value.IsString()) continue;
      std::string encoded = base::encode_base64({m.value.GetString(), m.value.GetStringLength()});
      data.RemoveMember(m.name.GetString());
      data.AddMember(rapidjson::Value(m.name, a), rapidjson::Value(encoded.c_str(), a), a);
    }
  }
  secret.RemoveMember("stringData");
}

std::string random_uuid() {
  std::uniform_int_distribution<int> nibble(0, 15);
  const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    int v = nibble(rng());
    if (i == 12) v = 4;            // version 4
    if (i == 16) v = 8 | (v & 3);  // RFC 4122 variant
    out += hex[v];
  }
  return out;
}

std::string random_suffix(size_t n) {
  // k8s.io/apimachinery/pkg/util/rand: no vowels (no words), no confusable 0/1/3.
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<size_t> pick(0, sizeof kAlphabet - 2);
  std::string out;
  for (size_t i = 0; i < n; ++i) out += kAlphabet[pick(rng())];
  return out;
}

std::string now_rfc3339() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace yurthub::fake
