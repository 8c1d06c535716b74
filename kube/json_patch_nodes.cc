// The containers of evanphx/json-patch v4.12.0 on RapidJSON values; see json_patch_nodes.h. Called
// by kube/json_patch.cc. Each function names the patch.go function it follows (json-patch v4.12.0,
// vendored by kubernetes v1.26 as vendor/github.com/evanphx/json-patch/patch.go). Pure.
#include "kube/json_patch_nodes.h"

#include <algorithm>

#include <rapidjson/writer.h>

#include "base/json_parse.h"

namespace yurthub::kube::json_patch_nodes {

using rapidjson::Value;

namespace {

// Deeper values are refused rather than risking the stack in the recursive helpers.
constexpr int kMaxDepth = static_cast<int>(base::kMaxJsonDepth);

std::string_view string_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// decodePatchKey: strings.NewReplacer("~1", "/", "~0", "~"), left to right; any other '~' stays.
std::string unescape(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
      out += raw[++i] == '0' ? '~' : '/';
    } else {
      out += raw[i];
    }
  }
  return out;
}

// strconv.Atoi: an optional sign and decimal digits (leading zeros allowed). Past 18 digits the
// number is beyond any array, so refusing it answers the same.
std::optional<long long> go_atoi(std::string_view s) {
  size_t i = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (i == s.size() || s.size() - i > 18) return std::nullopt;
  long long n = 0;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
    n = n * 10 + (s[j] - '0');
  }
  return s[0] == '-' ? -n : n;
}

Error bad_index(const std::string& key) {
  return go_atoi(key) ? make_error("array index " + key + " out of range")
                      : make_error("invalid array index \"" + key + "\"");
}

// lazyNode.equal compares scalars as compact JSON text: "1" and "1.0" differ. Approximated on
// parsed values: integers by value, doubles by value, an integer never equals a double.
bool scalars_equal(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) {
    if (a.IsDouble() || b.IsDouble()) return a.IsDouble() && b.IsDouble() && a == b;
    if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
    return a.IsUint64() && b.IsUint64() && a.GetUint64() == b.GetUint64();
  }
  if (a.GetType() != b.GetType()) return false;
  return !a.IsString() || string_of(a) == string_of(b);  // null, true, false: equal types
}

// Counts the bytes RapidJSON's writer would write, storing none.
struct CountingStream {
  using Ch = char;
  std::size_t bytes = 0;
  void Put(char) { ++bytes; }
  void Flush() {}
};

}  // namespace

std::optional<Path> split_path(std::string_view text) {
  size_t start = text.find('/');
  if (start == std::string_view::npos) return std::nullopt;
  Path path;
  for (size_t slash = text.find('/', ++start); slash != std::string_view::npos;
       start = slash + 1, slash = text.find('/', start)) {
    path.parents.push_back(unescape(text.substr(start, slash - start)));
  }
  path.key = unescape(text.substr(start));
  return path;
}

std::optional<size_t> array_index(std::string_view token, size_t size) {
  std::optional<long long> n = go_atoi(token);
  if (!n) return std::nullopt;
  long long index = *n < 0 ? *n + static_cast<long long>(size) : *n;
  if (index < 0 || index >= static_cast<long long>(size)) return std::nullopt;
  return static_cast<size_t>(index);
}

Result<Value*> get(Value& container, const std::string& key) {
  Value* found = nullptr;
  if (container.IsObject()) {
    auto it = container.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
    if (it != container.MemberEnd()) found = &it->value;
  } else if (std::optional<size_t> i = array_index(key, container.Size())) {
    found = &container[static_cast<rapidjson::SizeType>(*i)];
  } else {
    return bad_index(key);
  }
  return found == nullptr || found->IsNull() ? nullptr : found;
}

Value* find_container(Value& root, const Path& path) {
  Value* at = &root;
  for (const std::string& token : path.parents) {
    Result<Value*> next = get(*at, token);
    if (!next || *next == nullptr || !((*next)->IsObject() || (*next)->IsArray())) return nullptr;
    at = *next;
  }
  return at->IsObject() || at->IsArray() ? at : nullptr;
}

// Strings are copied too: RapidJSON 1.1's copy constructor keeps const-string references (e.g.
// from ParseInsitu) pointing into the patch's own buffer.
Value deep_copy(const Value& v, Allocator& allocator) {
  if (v.IsString()) return Value(v.GetString(), v.GetStringLength(), allocator);
  if (v.IsArray()) {
    Value out(rapidjson::kArrayType);
    out.Reserve(v.Size(), allocator);
    for (const Value& e : v.GetArray()) out.PushBack(deep_copy(e, allocator), allocator);
    return out;
  }
  if (v.IsObject()) {
    Value out(rapidjson::kObjectType);
    for (const auto& m : v.GetObject()) {
      out.AddMember(deep_copy(m.name, allocator), deep_copy(m.value, allocator), allocator);
    }
    return out;
  }
  return Value(v, allocator);  // null, booleans, numbers
}

Status add_at(Value& container, const std::string& key, Value&& value, Allocator& allocator) {
  if (container.IsObject()) {
    auto it = container.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
    if (it != container.MemberEnd()) {
      it->value.Swap(value);
    } else {
      container.AddMember(Value(key, allocator), value, allocator);
    }
    return {};
  }
  size_t size = container.Size();
  size_t index = size;
  if (key != "-") {
    std::optional<size_t> parsed = array_index(key, size + 1);
    if (!parsed) return bad_index(key);
    index = *parsed;
  }
  container.PushBack(value, allocator);
  for (auto i = static_cast<rapidjson::SizeType>(size); i > index; --i) {
    container[i].Swap(container[i - 1]);
  }
  return {};
}

Status remove_at(Value& container, const std::string& key, Value* removed) {
  Value* target = nullptr;
  if (container.IsObject()) {
    auto it = container.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
    if (it == container.MemberEnd()) return make_error("path not found");
    target = &it->value;
  } else if (std::optional<size_t> i = array_index(key, container.Size())) {
    target = &container[static_cast<rapidjson::SizeType>(*i)];
  } else {
    return bad_index(key);
  }
  if (removed != nullptr) removed->Swap(*target);
  if (container.IsArray()) {
    container.Erase(target);
    return {};
  }
  for (auto it = container.MemberBegin(); it != container.MemberEnd(); ++it) {
    if (&it->value == target) {
      container.EraseMember(it);  // keeps the order of the remaining members
      break;
    }
  }
  return {};
}

// lazyNode.equal: objects by members in any order (a null member equals only a null member),
// arrays element by element. A null array element makes json-patch dereference a nil node (the
// apiserver answers 500): unequal here, so refused either way.
bool go_equal(const Value& doc, const Value& value, int depth) {
  if (depth > kMaxDepth) return false;
  if (doc.IsObject()) {
    if (!value.IsObject() || doc.MemberCount() != value.MemberCount()) return false;
    for (const auto& m : doc.GetObject()) {
      auto it = value.FindMember(m.name);
      if (it == value.MemberEnd() || m.value.IsNull() != it->value.IsNull()) return false;
      if (!m.value.IsNull() && !go_equal(m.value, it->value, depth + 1)) return false;
    }
    return true;
  }
  if (doc.IsArray()) {
    if (!value.IsArray() || doc.Size() != value.Size()) return false;
    for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
      if (doc[i].IsNull() || value[i].IsNull()) return false;
      if (!go_equal(doc[i], value[i], depth + 1)) return false;
    }
    return true;
  }
  return scalars_equal(doc, value);
}

int depth_of(const Value& v, int depth) {
  if (depth > kMaxDepth) return depth;
  int deepest = depth;
  if (v.IsArray()) {
    for (const Value& e : v.GetArray()) deepest = std::max(deepest, depth_of(e, depth + 1));
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject()) deepest = std::max(deepest, depth_of(m.value, depth + 1));
  }
  return deepest;
}

std::size_t json_size(const Value& v) {
  CountingStream stream;
  rapidjson::Writer<CountingStream> writer(stream);
  v.Accept(writer);
  return stream.bytes;
}

}  // namespace yurthub::kube::json_patch_nodes
