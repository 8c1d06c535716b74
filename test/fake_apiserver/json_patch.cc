// JSON Patch and JSON Merge Patch; see json_patch.h. The JSON patch follows what the apiserver's
// evanphx/json-patch v4 does where it departs from RFC 6902: "replace" of a missing object member
// adds it, negative array indices count from the end, an absent "value" is null, "test" of a
// missing member passes for a null value, copy from a missing member copies null, scalars are
// compared by their JSON text, text before a path's first '/' is ignored, and the whole-document
// path "" is refused for add and remove (replace "" with a scalar is ignored). A "test" without
// "value" on a missing member panics json-patch: a 500 (PatchFailure::Unknown) here.
#include "test/fake_apiserver/json_patch.h"

#include <string_view>
#include <vector>

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

PatchError rejected(std::string message) {
  return PatchError{PatchFailure::Rejected, std::move(message)};
}

// A path's reference tokens, "~1" and "~0" decoded (RFC 6901 section 4). As evanphx/json-patch's
// findObject splits it: on '/', ignoring whatever comes before the first one ("a/b" is "/b").
// nullopt for a path without '/' ("" included: it names the whole document).
std::optional<std::vector<std::string>> split_pointer(std::string_view pointer) {
  const std::size_t first = pointer.find('/');
  if (first == std::string_view::npos) return std::nullopt;
  std::vector<std::string> tokens;
  std::size_t start = first + 1;
  while (true) {
    std::size_t slash = pointer.find('/', start);
    std::string_view raw =
        pointer.substr(start, slash == std::string_view::npos ? slash : slash - start);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(std::move(token));
    if (slash == std::string_view::npos) return tokens;
    start = slash + 1;
  }
}

// An array index as Go's strconv.Atoi reads it (optional sign, decimal digits), resolved against
// `size` elements, a negative one counted from the end. nullopt if malformed or out of [0, size).
std::optional<std::size_t> array_index(const std::string& token, std::size_t size) {
  std::size_t i = token.empty() || (token[0] != '-' && token[0] != '+') ? 0 : 1;
  if (i == token.size() || token.size() - i > 18) return std::nullopt;
  long long n = 0;
  for (; i < token.size(); ++i) {
    if (token[i] < '0' || token[i] > '9') return std::nullopt;
    n = n * 10 + (token[i] - '0');
  }
  if (token[0] == '-') n = -n;
  long long len = static_cast<long long>(size);
  if (n < 0) n += len;
  if (n < 0 || n >= len) return std::nullopt;
  return static_cast<std::size_t>(n);
}

// The value one token below `parent`, or nullptr.
Value* child(Value& parent, const std::string& token) {
  if (parent.IsObject()) {
    auto it = parent.FindMember(Value(rapidjson::StringRef(token.data(), token.size())));
    return it == parent.MemberEnd() ? nullptr : &it->value;
  }
  if (parent.IsArray()) {
    auto idx = array_index(token, parent.Size());
    return idx ? &parent[static_cast<rapidjson::SizeType>(*idx)] : nullptr;
  }
  return nullptr;
}

// The container that holds the last token of `tokens` (evanphx's findObject), or nullptr.
Value* parent_of(Value& root, const std::vector<std::string>& tokens) {
  Value* at = &root;
  for (std::size_t i = 0; i + 1 < tokens.size() && at != nullptr; ++i) at = child(*at, tokens[i]);
  return at != nullptr && (at->IsObject() || at->IsArray()) ? at : nullptr;
}

class JsonPatcher {
 public:
  explicit JsonPatcher(rapidjson::Document& doc) : doc_(doc), alloc_(doc.GetAllocator()) {}

  // Applies one operation; why it does not apply, if it does not.
  std::optional<PatchError> apply(const Value& op);

 private:
  std::optional<std::string> add(const std::string& path, Value value);
  std::optional<std::string> remove(const std::string& path, Value* removed);
  std::optional<std::string> replace(const std::string& path, Value value);
  // `given`: the operation's "value", nullptr when it has none.
  std::optional<PatchError> test(const std::string& path, const Value* given);
  std::optional<std::string> copy(const std::string& from, const std::string& path);
  std::optional<std::string> move(const std::string& from, const std::string& path);

  rapidjson::Document& doc_;
  Allocator& alloc_;
  std::size_t copied_bytes_ = 0;
};

// Equality as evanphx/json-patch's lazyNode.equal: objects by their members, arrays element by
// element, anything else by its JSON text, so 1 and 1.0 differ.
bool patch_equal(const Value& a, const Value& b) {
  if (a.IsObject() && b.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return false;
    for (const auto& m : a.GetObject()) {
      auto it = b.FindMember(m.name);
      if (it == b.MemberEnd() || !patch_equal(m.value, it->value)) return false;
    }
    return true;
  }
  if (a.IsArray() && b.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      if (!patch_equal(a[i], b[i])) return false;
    }
    return true;
  }
  return to_json(a) == to_json(b);
}

// The last member called `name`: Go's decoding into a map keeps the last of duplicate keys.
const Value* last_member(const Value& op, std::string_view name) {
  const Value* found = nullptr;
  for (const auto& m : op.GetObject()) {
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == name) found = &m.value;
  }
  return found;
}

std::string string_member(const Value& op, const char* name, bool* present) {
  const Value* v = last_member(op, name);
  *present = v != nullptr && v->IsString();
  return *present ? std::string(v->GetString(), v->GetStringLength()) : "";
}

std::optional<PatchError> JsonPatcher::apply(const Value& op) {
  bool has_op = false, has_path = false, has_from = false;
  std::string kind = string_member(op, "op", &has_op);
  std::string path = string_member(op, "path", &has_path);
  std::string from = string_member(op, "from", &has_from);
  if (!has_op) kind = "unknown";
  if (kind != "add" && kind != "remove" && kind != "replace" && kind != "move" && kind != "test" &&
      kind != "copy") {
    return rejected("Unexpected kind: " + kind);
  }
  if (!has_path) return rejected(kind + " operation failed to decode path");
  if ((kind == "move" || kind == "copy") && !has_from)
    return rejected(kind + " operation failed to decode from");
  const Value* given = last_member(op, "value");
  if (kind == "test") return test(path, given);
  Value value;  // an absent "value" is null, as in evanphx/json-patch
  if (given != nullptr) value.CopyFrom(*given, alloc_);
  std::optional<std::string> error;
  if (kind == "add")
    error = add(path, std::move(value));
  else if (kind == "remove")
    error = remove(path, nullptr);
  else if (kind == "replace")
    error = replace(path, std::move(value));
  else if (kind == "copy")
    error = copy(from, path);
  else
    error = move(from, path);
  if (error) return rejected(std::move(*error));
  return std::nullopt;
}

std::optional<std::string> JsonPatcher::add(const std::string& path, Value value) {
  auto tokens = split_pointer(path);
  Value* parent = tokens ? parent_of(doc_, *tokens) : nullptr;
  if (parent == nullptr)
    return "add operation does not apply: doc is missing path: \"" + path + "\"";
  const std::string& key = tokens->back();
  if (parent->IsObject()) {
    Value* existing = child(*parent, key);
    if (existing != nullptr) {
      *existing = std::move(value);
    } else {
      parent->AddMember(Value(key.c_str(), static_cast<rapidjson::SizeType>(key.size()), alloc_),
                        std::move(value), alloc_);
    }
    return std::nullopt;
  }
  std::size_t size = parent->Size();
  std::size_t at = size;  // "-" appends
  if (key != "-") {
    // One past the end is a valid place to insert; a negative index counts from that end.
    auto idx = array_index(key, size + 1);
    if (!idx)
      return "error in add for path: '" + path + "': Unable to access invalid index: " + key;
    at = *idx;
  }
  parent->PushBack(Value(), alloc_);
  for (std::size_t i = size; i > at; --i) {
    (*parent)[static_cast<rapidjson::SizeType>(i)] =
        std::move((*parent)[static_cast<rapidjson::SizeType>(i - 1)]);
  }
  (*parent)[static_cast<rapidjson::SizeType>(at)] = std::move(value);
  return std::nullopt;
}

std::optional<std::string> JsonPatcher::remove(const std::string& path, Value* removed) {
  auto tokens = split_pointer(path);
  Value* parent = tokens ? parent_of(doc_, *tokens) : nullptr;
  if (parent == nullptr)
    return "remove operation does not apply: doc is missing path: \"" + path + "\"";
  const std::string& key = tokens->back();
  if (parent->IsObject()) {
    auto it = parent->FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
    if (it == parent->MemberEnd())
      return "Unable to remove nonexistent key: " + key + ": missing value";
    if (removed != nullptr) *removed = std::move(it->value);
    parent->EraseMember(it);
    return std::nullopt;
  }
  auto idx = array_index(key, parent->Size());
  if (!idx)
    return "error in remove for path: '" + path + "': Unable to access invalid index: " + key;
  auto it = parent->Begin() + *idx;
  if (removed != nullptr) *removed = std::move(*it);
  parent->Erase(it);
  return std::nullopt;
}

std::optional<std::string> JsonPatcher::replace(const std::string& path, Value value) {
  if (path.empty()) {
    // json-patch v4 returns errors.Wrapf(nil, ...) here, which is nil: a scalar is ignored.
    if (!value.IsObject() && !value.IsArray()) return std::nullopt;
    static_cast<Value&>(doc_) = std::move(value);
    return std::nullopt;
  }
  auto tokens = split_pointer(path);
  Value* parent = tokens ? parent_of(doc_, *tokens) : nullptr;
  if (parent == nullptr) return "replace operation does not apply: doc is missing path: " + path;
  if (parent->IsArray() && child(*parent, tokens->back()) == nullptr) {
    return "replace operation does not apply: doc is missing key: " + path;
  }
  // On an object, evanphx/json-patch v4 sets the member whether or not it was there.
  return add(path, std::move(value));
}

std::optional<PatchError> JsonPatcher::test(const std::string& path, const Value* given) {
  const Value* target = &doc_;
  if (!path.empty()) {
    auto tokens = split_pointer(path);
    Value* parent = tokens ? parent_of(doc_, *tokens) : nullptr;
    if (parent == nullptr)
      return rejected("test operation does not apply: is missing path: " + path);
    target = child(*parent, tokens->back());
    if (target == nullptr && parent->IsArray()) {
      return rejected("error in test for path: '" + path + "': Unable to access invalid index");
    }
  }
  const bool target_null = target == nullptr || target->IsNull();
  if (target_null && given == nullptr) {
    // json-patch v4 reads op.value().raw through a nil pointer and panics: the apiserver's 500.
    return PatchError{PatchFailure::Unknown,
                      "test of " + path + " without a value (json-patch v4 dereferences nil)"};
  }
  const Value null_value;  // an absent "value" is null
  const Value& value = given != nullptr ? *given : null_value;
  const bool equal = target_null ? value.IsNull() : patch_equal(*target, value);
  if (!equal) return rejected("testing value " + path + " failed: test failed");
  return std::nullopt;
}

std::optional<std::string> JsonPatcher::copy(const std::string& from, const std::string& path) {
  auto tokens = split_pointer(from);
  Value* parent = tokens ? parent_of(doc_, *tokens) : nullptr;
  if (parent == nullptr) return "copy operation does not apply: doc is missing from path: " + from;
  Value* source = child(*parent, tokens->back());
  if (source == nullptr && parent->IsArray()) {
    return "error in copy for from: '" + from + "': Unable to access invalid index";
  }
  // A missing object member reads as nil in json-patch v4, and nil is copied as null.
  Value value;
  if (source != nullptr) value.CopyFrom(*source, alloc_);
  copied_bytes_ += to_json(value).size();
  if (copied_bytes_ > kJsonPatchMaxCopyBytes) {
    return "Unable to complete the copy, the accumulated size increase of copy is " +
           std::to_string(copied_bytes_) + ", exceeding the limit " +
           std::to_string(kJsonPatchMaxCopyBytes);
  }
  return add(path, std::move(value));
}

std::optional<std::string> JsonPatcher::move(const std::string& from, const std::string& path) {
  Value value;
  if (auto error = remove(from, &value)) return "error in move for path: '" + from + "': " + *error;
  return add(path, std::move(value));
}

void merge(Value& target, const Value& patch, Allocator& alloc) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, alloc);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    auto it = target.FindMember(m.name);
    if (m.value.IsNull()) {
      if (it != target.MemberEnd()) target.EraseMember(it);
    } else if (it != target.MemberEnd()) {
      merge(it->value, m.value, alloc);
    } else {
      Value fresh;
      merge(fresh, m.value, alloc);  // nulls inside a new member are dropped too
      target.AddMember(Value(m.name, alloc), std::move(fresh), alloc);
    }
  }
}

}  // namespace

const char* go_json_type(const Value& value) {
  if (value.IsObject()) return "object";
  if (value.IsArray()) return "array";
  if (value.IsString()) return "string";
  if (value.IsNumber()) return "number";
  if (value.IsBool()) return "bool";
  return "null";
}

std::optional<PatchError> apply_json_patch(rapidjson::Document& doc, const Value& patch) {
  if (!patch.IsArray()) {
    return PatchError{PatchFailure::BadRequest, std::string("json: cannot unmarshal ") +
                                                    go_json_type(patch) +
                                                    " into Go value of type jsonpatch.Patch"};
  }
  for (const auto& op : patch.GetArray()) {
    if (!op.IsObject() && !op.IsNull()) {
      return PatchError{PatchFailure::BadRequest, std::string("json: cannot unmarshal ") +
                                                      go_json_type(op) +
                                                      " into Go value of type jsonpatch.Operation"};
    }
  }
  if (patch.Size() > kJsonPatchMaxOperations) {
    return PatchError{PatchFailure::TooLarge, "The allowed maximum operations in a JSON patch is " +
                                                  std::to_string(kJsonPatchMaxOperations) +
                                                  ", got " + std::to_string(patch.Size())};
  }
  rapidjson::Document work;
  work.CopyFrom(doc, work.GetAllocator());
  JsonPatcher patcher(work);
  Value empty(rapidjson::kObjectType);
  for (const auto& op : patch.GetArray()) {
    if (auto error = patcher.apply(op.IsNull() ? empty : op)) return error;
  }
  doc.Swap(work);
  return std::nullopt;
}

void apply_merge_patch(rapidjson::Document& doc, const Value& patch) {
  merge(doc, patch, doc.GetAllocator());
}

}  // namespace yurthub::fake
