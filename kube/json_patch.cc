// RFC 6902 JSON Patch (with RFC 6901 pointers) and RFC 7386 JSON Merge Patch on RapidJSON
// documents (see json_patch.h). Called by the offline write journal and the fake apiserver.
// Pure; no I/O, no shared state.
#include "kube/json_patch.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/writer.h>

#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using Tokens = std::vector<std::string>;

// Deeper documents are refused rather than risking the stack in the recursive helpers (and in
// the caller's, which serializes the result): the bound every parse of input has.
constexpr int kMaxDepth = static_cast<int>(base::kMaxJsonDepth);

std::string_view string_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 -> '/', ~0 -> '~'.
Result<Tokens> parse_pointer(std::string_view pointer) {
  Tokens tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return make_error("JSON pointer must be empty or start with '/'");
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (pointer[i - 1] == '/') tokens.emplace_back();  // escapes never produce a raw '/'
    if (i == pointer.size()) break;
    char c = pointer[i];
    if (c == '/') continue;
    if (c != '~') {
      tokens.back() += c;
      continue;
    }
    char next = i + 1 < pointer.size() ? pointer[i + 1] : '\0';
    if (next != '0' && next != '1') return make_error("invalid '~' escape in JSON pointer");
    tokens.back() += next == '0' ? '~' : '/';
    ++i;
  }
  return tokens;
}

// An RFC 6901 array index: "0" or a digit string without a leading zero. "-" is not one.
std::optional<size_t> parse_index(std::string_view token) {
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token.front() == '0')) {
    return std::nullopt;
  }
  size_t index = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index;
}

Value* find_member(Value& object, const std::string& name) {
  auto it = object.FindMember(Value(rapidjson::StringRef(name.data(), name.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

// Copies `v` into `allocator`, strings included: RapidJSON 1.1's copy constructor keeps
// const-string references (e.g. from ParseInsitu) pointing into the patch's own buffer.
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

// The member or element `token` names in `parent`, or nullptr ("-" names no element).
Value* child(Value& parent, const std::string& token) {
  if (parent.IsObject()) return find_member(parent, token);
  if (!parent.IsArray()) return nullptr;
  std::optional<size_t> index = parse_index(token);
  return index && *index < parent.Size() ? &parent[static_cast<rapidjson::SizeType>(*index)]
                                         : nullptr;
}

// The value `tokens[0, count)` points at, or nullptr.
Value* resolve(Value& root, const Tokens& tokens, size_t count) {
  Value* current = &root;
  for (size_t i = 0; i < count && current != nullptr; ++i) current = child(*current, tokens[i]);
  return current;
}

Status add_value(Value& root, const Tokens& path, Value&& value, Allocator& allocator) {
  if (path.empty()) {
    root.Swap(value);
    return {};
  }
  Value* parent = resolve(root, path, path.size() - 1);
  if (parent == nullptr) return make_error("parent path not found");
  const std::string& last = path.back();
  if (parent->IsObject()) {
    if (Value* existing = find_member(*parent, last)) {
      existing->Swap(value);
    } else {
      parent->AddMember(Value(last, allocator), value, allocator);
    }
    return {};
  }
  if (!parent->IsArray()) return make_error("parent is neither an object nor an array");
  size_t size = parent->Size();
  size_t index = size;
  if (last != "-") {
    std::optional<size_t> parsed = parse_index(last);
    if (!parsed) return make_error("invalid array index \"" + last + "\"");
    if (*parsed > size) return make_error("array index " + last + " out of range");
    index = *parsed;
  }
  parent->PushBack(value, allocator);
  for (auto i = static_cast<rapidjson::SizeType>(size); i > index; --i) {
    (*parent)[i].Swap((*parent)[i - 1]);
  }
  return {};
}

// Removes the value at `path`, moving it into `*removed` if that is not null.
Status remove_value(Value& root, const Tokens& path, Value* removed) {
  if (path.empty()) return make_error("cannot remove the whole document");
  Value* parent = resolve(root, path, path.size() - 1);
  Value* target = parent == nullptr ? nullptr : child(*parent, path.back());
  if (target == nullptr) return make_error("path not found");
  if (removed != nullptr) removed->Swap(*target);
  if (parent->IsArray()) {
    parent->Erase(target);
    return {};
  }
  for (auto it = parent->MemberBegin(); it != parent->MemberEnd(); ++it) {
    if (&it->value == target) {
      parent->EraseMember(it);  // keeps the order of the remaining members
      break;
    }
  }
  return {};
}

bool numbers_equal(const Value& a, const Value& b) {
  if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
  if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
  if (a.IsDouble() || b.IsDouble()) return a.GetDouble() == b.GetDouble();
  return false;  // a negative integer and one above INT64_MAX
}

// RFC 6902 section 4.6: structural equality, numbers by value, object members in any order.
bool deep_equal(const Value& a, const Value& b, int depth) {
  if (depth > kMaxDepth) return false;
  if (a.IsNumber() && b.IsNumber()) return numbers_equal(a, b);
  if (a.GetType() != b.GetType()) return false;
  if (a.IsString()) return string_of(a) == string_of(b);
  if (a.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      if (!deep_equal(a[i], b[i], depth + 1)) return false;
    }
    return true;
  }
  if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return false;
    for (const auto& member : a.GetObject()) {
      auto it = b.FindMember(member.name);
      if (it == b.MemberEnd() || !deep_equal(member.value, it->value, depth + 1)) return false;
    }
    return true;
  }
  return true;  // null, true, false: equal types
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

// Counts the bytes RapidJSON's writer would write, storing none.
struct CountingStream {
  using Ch = char;
  std::size_t bytes = 0;
  void Put(char) { ++bytes; }
  void Flush() {}
};

// The compact JSON size of `v`, as json-patch measures a copy. REQUIRES: `v` is no deeper than
// kMaxDepth (the writer recurses).
std::size_t json_size(const Value& v) {
  CountingStream stream;
  rapidjson::Writer<CountingStream> writer(stream);
  v.Accept(writer);
  return stream.bytes;
}

// "copy" from `source` to `path`, bounded like the apiserver's json-patch: `*copied` is the
// patch's accumulated size increase from copies so far.
Status copy_value(rapidjson::Document& doc, const Value& source, const Tokens& path,
                  std::size_t* copied) {
  if (depth_of(source, 0) + static_cast<int>(path.size()) > kMaxDepth) {
    return make_error("the copy would nest the document more than " + std::to_string(kMaxDepth) +
                      " levels deep");
  }
  *copied += json_size(source);
  if (*copied > kMaxJsonPatchCopyBytes) {
    return make_error("Unable to complete the copy, the accumulated size increase of copy is " +
                      std::to_string(*copied) + ", exceeding the limit " +
                      std::to_string(kMaxJsonPatchCopyBytes));
  }
  return add_value(doc, path, deep_copy(source, doc.GetAllocator()), doc.GetAllocator());
}

// One parsed operation of a patch.
struct Operation {
  std::string op;
  std::string path_text;
  Tokens path;
  Tokens from;
  const Value* value = nullptr;
};

const Value* member(const Value& object, const char* name) {
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

Status parse_operation_fields(const Value& raw, Operation* op) {
  if (!raw.IsObject()) return make_error("operation is not an object");
  const Value* op_value = member(raw, "op");
  if (op_value == nullptr || !op_value->IsString()) {
    return make_error("missing or non-string \"op\"");
  }
  op->op = std::string(string_of(*op_value));
  const Value* path = member(raw, "path");
  if (path == nullptr || !path->IsString()) return make_error("missing or non-string \"path\"");
  op->path_text = std::string(string_of(*path));
  return {};
}

Status parse_operation_args(const Value& raw, Operation* op) {
  static const char* const kOps[] = {"add", "remove", "replace", "move", "copy", "test"};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* k) { return op->op == k; })) {
    return make_error("unknown operation \"" + op->op + "\"");
  }
  auto path = parse_pointer(op->path_text);
  if (!path) return path.error();
  op->path = std::move(path).value();
  if (op->op == "move" || op->op == "copy") {
    const Value* from = member(raw, "from");
    if (from == nullptr || !from->IsString()) return make_error("missing or non-string \"from\"");
    auto tokens = parse_pointer(string_of(*from));
    if (!tokens) return make_error("\"from\": " + tokens.error().message);
    op->from = std::move(tokens).value();
  }
  if (op->op == "add" || op->op == "replace" || op->op == "test") {
    op->value = member(raw, "value");
    if (op->value == nullptr) return make_error("missing \"value\"");
    if (depth_of(*op->value, 0) > kMaxDepth) return make_error("\"value\" is nested too deeply");
  }
  return {};
}

bool is_proper_prefix(const Tokens& prefix, const Tokens& path) {
  return prefix.size() < path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

Status apply_operation(rapidjson::Document& doc, const Operation& op, std::size_t* copied) {
  Allocator& allocator = doc.GetAllocator();
  if (op.op == "add") return add_value(doc, op.path, deep_copy(*op.value, allocator), allocator);
  if (op.op == "remove") return remove_value(doc, op.path, nullptr);
  if (op.op == "replace") {
    Value* target = resolve(doc, op.path, op.path.size());
    if (target == nullptr) return make_error("path not found");
    Value copy = deep_copy(*op.value, allocator);
    target->Swap(copy);
    return {};
  }
  if (op.op == "test") {
    const Value* target = resolve(doc, op.path, op.path.size());
    if (target == nullptr) return make_error("path not found");
    if (!deep_equal(*target, *op.value, 0)) return make_error("test failed: value differs");
    return {};
  }
  Value* source = resolve(doc, op.from, op.from.size());
  if (source == nullptr) return make_error("from path not found");
  if (op.op == "copy") return copy_value(doc, *source, op.path, copied);
  // move
  if (op.from == op.path) return {};
  if (is_proper_prefix(op.from, op.path)) {
    return make_error("cannot move a value into one of its own children");
  }
  Value moved;
  if (Status removed = remove_value(doc, op.from, &moved); !removed) return removed;
  return add_value(doc, op.path, std::move(moved), allocator);
}

// RFC 7386 section 2, MergePatch(Target, Patch).
void merge(Value& target, const Value& patch, Allocator& allocator) {
  if (!patch.IsObject()) {
    Value copy = deep_copy(patch, allocator);
    target.Swap(copy);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& entry : patch.GetObject()) {
    auto it = target.FindMember(entry.name);
    if (entry.value.IsNull()) {
      for (; it != target.MemberEnd(); it = target.FindMember(entry.name)) target.EraseMember(it);
      continue;
    }
    if (it == target.MemberEnd()) {
      target.AddMember(deep_copy(entry.name, allocator), Value(), allocator);
      it = target.MemberEnd() - 1;
    }
    merge(it->value, entry.value, allocator);
  }
}

}  // namespace

std::string too_many_operations(std::size_t operations) {
  return "The allowed maximum operations in a JSON patch is " +
         std::to_string(kMaxJsonPatchOperations) + ", got " + std::to_string(operations);
}

Status apply_json_patch(rapidjson::Document& target, const Value& patch) {
  if (!patch.IsArray()) return make_error("json patch must be an array of operations");
  if (patch.Size() > kMaxJsonPatchOperations) return make_error(too_many_operations(patch.Size()));
  std::size_t copied = 0;
  for (rapidjson::SizeType i = 0; i < patch.Size(); ++i) {
    std::string name = "json patch operation " + std::to_string(i);
    Operation op;
    if (Status s = parse_operation_fields(patch[i], &op); !s) {
      return make_error(name + ": " + s.error().message);
    }
    name += " (" + op.op + " " + op.path_text + ")";
    if (Status s = parse_operation_args(patch[i], &op); !s) {
      return make_error(name + ": " + s.error().message);
    }
    if (Status s = apply_operation(target, op, &copied); !s) {
      return make_error(name + ": " + s.error().message);
    }
  }
  // An add may put a value up to kMaxDepth deep at a path as deep: the result's readers recurse.
  if (depth_of(target, 0) > kMaxDepth) {
    return make_error("the patched document is nested more than " + std::to_string(kMaxDepth) +
                      " levels deep");
  }
  return {};
}

Status apply_merge_patch(rapidjson::Document& target, const Value& patch) {
  if (depth_of(patch, 0) > kMaxDepth) return make_error("merge patch is nested too deeply");
  merge(target, patch, target.GetAllocator());
  return {};
}

}  // namespace yurthub::kube
