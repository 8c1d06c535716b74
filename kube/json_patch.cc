// JSON Patch as kube-apiserver v1.26 applies it (github.com/evanphx/json-patch v4.12.0; its
// departures from RFC 6902 are listed in json_patch.h) and RFC 7386 JSON Merge Patch, on RapidJSON
// documents. Called by the offline write journal (cache/offline_apply.cc). Pure; no I/O.
//
// The apiserver calls jsonpatch.DecodePatch and patchObj.Apply (k8s.io/apiserver
// endpoints/handlers/patch.go), so the package defaults hold: SupportNegativeIndices = true, and
// AccumulatedCopySizeLimit set from JSONPatchMaxCopyBytes (3 MiB) by server/config.go. The
// containers json-patch works on (paths, indices, equality) are in json_patch_nodes.cc.
//
// rapidjson::Pointer is not used: json-patch does not parse RFC 6901 pointers. It splits the path
// on '/' and drops the text before the first '/', keeps a '~' that starts no escape, and reads
// array indices with strconv.Atoi (sign, leading zeros, negative from the end); rapidjson::Pointer
// refuses or reads each of these otherwise.
#include "kube/json_patch.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_parse.h"
#include "kube/json_patch_nodes.h"

namespace yurthub::kube {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using namespace json_patch_nodes;  // NOLINT(google-build-using-namespace): a .cc, one namespace

constexpr int kMaxDepth = static_cast<int>(base::kMaxJsonDepth);

std::string_view string_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// One operation of a patch, its members read as Go's decoding into a map reads them: the last of
// duplicate names wins, a null or non-string "op"/"path"/"from" is absent.
struct Operation {
  std::string op;
  std::string path;
  std::string from;
  const Value* value = nullptr;  // nullptr: no "value" member
};

const Value* last_member(const Value& object, std::string_view name) {
  const Value* found = nullptr;
  for (const auto& m : object.GetObject()) {
    if (string_of(m.name) == name) found = &m.value;
  }
  return found;
}

Status parse_operation_fields(const Value& raw, Operation* op) {
  if (!raw.IsObject()) return make_error("operation is not an object");
  const Value* op_value = last_member(raw, "op");
  if (op_value == nullptr || !op_value->IsString()) {
    return make_error("missing or non-string \"op\"");
  }
  op->op = std::string(string_of(*op_value));
  const Value* path = last_member(raw, "path");
  if (path == nullptr || !path->IsString()) return make_error("missing or non-string \"path\"");
  op->path = std::string(string_of(*path));
  return {};
}

Status parse_operation_args(const Value& raw, Operation* op) {
  static const char* const kOps[] = {"add", "remove", "replace", "move", "copy", "test"};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* k) { return op->op == k; })) {
    return make_error("unknown operation \"" + op->op + "\"");
  }
  if (op->op == "move" || op->op == "copy") {
    const Value* from = last_member(raw, "from");
    if (from == nullptr || !from->IsString()) return make_error("missing or non-string \"from\"");
    op->from = std::string(string_of(*from));
  }
  op->value = last_member(raw, "value");
  if (op->value != nullptr && depth_of(*op->value, 0) > kMaxDepth) {
    return make_error("\"value\" is nested too deeply");
  }
  return {};
}

Value value_or_null(const Operation& op, Allocator& allocator) {
  return op.value == nullptr ? Value() : deep_copy(*op.value, allocator);  // Go's nil node: null
}

// The json-patch operations. Each resolves its path(s) with findObject on the document as it is
// at that moment (a move removes before it resolves its destination).
class Patcher {
 public:
  explicit Patcher(rapidjson::Document& doc) : doc_(doc), allocator_(doc.GetAllocator()) {}

  Status apply(const Operation& op) {
    if (op.op == "replace" && op.path.empty()) return replace_document(op);
    if (op.op == "test" && op.path.empty()) return test_value(&doc_, op);
    std::optional<Path> path = split_path(op.path);
    // add/remove/move/copy on "" (or on a path without '/'): findObject finds no container.
    if (!path) return make_error("path not found");
    if (op.op == "add") return add(*path, value_or_null(op, allocator_));
    if (op.op == "remove") return remove(*path, nullptr);
    if (op.op == "replace") return replace(*path, op);
    if (op.op == "test") return test(*path, op);
    std::optional<Path> from = split_path(op.from);
    if (!from) return make_error("from path not found");
    if (op.op == "copy") return copy(*from, *path);
    // move: remove, then add where the path points once the value is gone, so moving a value
    // into one of its own children finds no parent.
    Value moved;
    if (Status s = remove(*from, &moved); !s) return make_error("from " + s.error().message);
    return add(*path, std::move(moved));
  }

 private:
  Status add(const Path& path, Value&& value) {
    Value* container = find_container(doc_, path);
    if (container == nullptr) return make_error("parent path not found");
    return add_at(*container, path.key, std::move(value), allocator_);
  }

  Status remove(const Path& path, Value* removed) {
    Value* container = find_container(doc_, path);
    if (container == nullptr) return make_error("path not found");
    return remove_at(*container, path.key, removed);
  }

  // partialDoc.get never fails, so an object's missing member is added (json-patch v5 refuses
  // it); an array's index must exist.
  Status replace(const Path& path, const Operation& op) {
    Value* container = find_container(doc_, path);
    if (container == nullptr) return make_error("path not found");
    if (Result<Value*> target = get(*container, path.key); !target) return target.error();
    return add_at_existing(*container, path.key, value_or_null(op, allocator_));
  }

  // partialArray.set: the index exists (checked by the caller), negative counted from the end.
  Status add_at_existing(Value& container, const std::string& key, Value&& value) {
    if (container.IsObject()) return add_at(container, key, std::move(value), allocator_);
    container[static_cast<rapidjson::SizeType>(*array_index(key, container.Size()))].Swap(value);
    return {};
  }

  // replace "": an object or array value becomes the document; any other value is a no-op (the
  // error returned is errors.Wrapf(nil, ...), which is nil); a missing one is a nil dereference.
  Status replace_document(const Operation& op) {
    if (op.value == nullptr) return make_error("missing \"value\"");
    if (op.value->IsObject() || op.value->IsArray()) {
      Value copy = deep_copy(*op.value, allocator_);
      static_cast<Value&>(doc_).Swap(copy);
    }
    return {};
  }

  Status test(const Path& path, const Operation& op) {
    Value* container = find_container(doc_, path);
    if (container == nullptr) return make_error("path not found");
    Result<Value*> target = get(*container, path.key);
    if (!target) return target.error();
    return test_value(*target, op);
  }

  // A missing or null target (nullptr) equals only a null value. Against a missing "value", a
  // missing or null target or the whole document makes json-patch dereference a nil node (the
  // apiserver answers 500): refused; any other target fails the test.
  Status test_value(const Value* target, const Operation& op) {
    if (op.value == nullptr && (target == nullptr || target == &doc_)) {
      return make_error("missing \"value\"");
    }
    bool equal = target == nullptr ? op.value->IsNull()
                                   : op.value != nullptr && go_equal(*target, *op.value, 0);
    return equal ? Status{} : make_error("test failed: value differs");
  }

  // A missing or null source copies null (deepCopy of a nil node), adding nothing to the
  // accumulated size. The size is counted, and bounded, before the value is added.
  Status copy(const Path& from, const Path& path) {
    Value* container = find_container(doc_, from);
    if (container == nullptr) return make_error("from path not found");
    Result<Value*> source = get(*container, from.key);
    if (!source) return make_error("from " + source.error().message);
    Value* target = find_container(doc_, path);
    if (target == nullptr) return make_error("parent path not found");
    if (*source == nullptr) return add_at(*target, path.key, Value(), allocator_);
    const Value& value = **source;
    if (depth_of(value, 0) + static_cast<int>(path.parents.size()) + 1 > kMaxDepth) {
      return make_error("the copy would nest the document more than " + std::to_string(kMaxDepth) +
                        " levels deep");
    }
    copied_ += json_size(value);
    if (copied_ > kMaxJsonPatchCopyBytes) {
      return make_error("Unable to complete the copy, the accumulated size increase of copy is " +
                        std::to_string(copied_) + ", exceeding the limit " +
                        std::to_string(kMaxJsonPatchCopyBytes));
    }
    return add_at(*target, path.key, deep_copy(value, allocator_), allocator_);
  }

  rapidjson::Document& doc_;
  Allocator& allocator_;
  std::size_t copied_ = 0;  // the patch's accumulated size increase from copies so far
};

// Whether each member of `object` is the last of its name. The apiserver decodes a merge patch's
// objects into Go maps, where the last of duplicate names wins and the others are never applied.
std::vector<bool> last_of_each_name(const Value& object) {
  std::vector<bool> last(object.MemberCount(), true);
  if (last.size() < 2) return last;
  std::vector<rapidjson::SizeType> order(last.size());
  for (rapidjson::SizeType i = 0; i < order.size(); ++i) order[i] = i;
  auto name = [&](rapidjson::SizeType i) { return string_of(object.MemberBegin()[i].name); };
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return name(a) < name(b); });
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    if (name(order[i]) == name(order[i + 1])) last[order[i]] = false;
  }
  return last;
}

// RFC 7386 section 2, MergePatch(Target, Patch), with duplicate names as above.
void merge(Value& target, const Value& patch, Allocator& allocator) {
  if (!patch.IsObject()) {
    Value copy = deep_copy(patch, allocator);
    target.Swap(copy);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  const std::vector<bool> last = last_of_each_name(patch);
  for (auto entry_it = patch.MemberBegin(); entry_it != patch.MemberEnd(); ++entry_it) {
    if (!last[entry_it - patch.MemberBegin()]) continue;
    const auto& entry = *entry_it;
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
  Patcher patcher(target);
  for (rapidjson::SizeType i = 0; i < patch.Size(); ++i) {
    std::string name = "json patch operation " + std::to_string(i);
    Operation op;
    if (Status s = parse_operation_fields(patch[i], &op); !s) {
      return make_error(name + ": " + s.error().message);
    }
    name += " (" + op.op + " " + op.path + ")";
    if (Status s = parse_operation_args(patch[i], &op); !s) {
      return make_error(name + ": " + s.error().message);
    }
    if (Status s = patcher.apply(op); !s) {
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
