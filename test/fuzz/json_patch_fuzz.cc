// Fuzz target for kube/json_patch.h (RFC 6902 JSON patch, RFC 7386 merge patch) and
// kube/merge_patch_diff.h, which the offline journal applies to cached objects and uses to
// replay stale updates. The input's NUL-separated parts: a document, a patch, a second document.
// Oracles: a patched document writes and parses back within the parse bound; a merge patch is
// idempotent; the diff of two documents, applied to the first, gives the second (when it has no
// null member and no duplicate keys, as create_merge_patch documents).
#include "kube/json_patch.h"

#include "base/json_parse.h"
#include "kube/merge_patch_diff.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;
using rapidjson::Value;

namespace {

bool numbers_equal(const Value& a, const Value& b) {
  if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
  if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
  return a.GetDouble() == b.GetDouble();
}

// Equal by value: members in any order, numbers by value. REQUIRES: no duplicate keys.
bool equal(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) return numbers_equal(a, b);
  if (a.GetType() != b.GetType()) return false;
  if (a.IsString()) return a == b;
  if (a.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      if (!equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (!a.IsObject()) return true;
  if (a.MemberCount() != b.MemberCount()) return false;
  for (const auto& m : a.GetObject()) {
    auto it = b.FindMember(m.name);
    if (it == b.MemberEnd() || !equal(m.value, it->value)) return false;
  }
  return true;
}

// No object member is null and no object has a key twice.
bool plain(const Value& v) {
  if (v.IsArray()) {
    for (const Value& e : v.GetArray()) {
      if (!plain(e)) return false;
    }
  }
  if (!v.IsObject()) return true;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    if (m->value.IsNull() || !plain(m->value)) return false;
    for (auto n = v.MemberBegin(); n != m; ++n) {
      if (n->name == m->name) return false;
    }
  }
  return true;
}

void check_writable(const Value& result) {
  rapidjson::Document again;
  fuzz::check(static_cast<bool>(base::parse_json(base::to_json(result), again)),
              "a patched document does not parse back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  rapidjson::Document doc, patch, other;
  if (!base::parse_json(parts[0], doc) || !base::parse_json(parts[1], patch)) return 0;

  rapidjson::Document target;
  target.CopyFrom(doc, target.GetAllocator());
  if (kube::apply_json_patch(target, patch)) check_writable(target);

  target.CopyFrom(doc, target.GetAllocator());
  if (kube::apply_merge_patch(target, patch)) {
    check_writable(target);
    const std::string once = base::to_json(target);
    fuzz::check(kube::apply_merge_patch(target, patch).ok() && base::to_json(target) == once,
                "a merge patch is not idempotent");
  }

  if (!base::parse_json(parts[2], other) || !plain(doc) || !plain(other)) return 0;
  const rapidjson::Document diff = kube::create_merge_patch(doc, other);
  target.CopyFrom(doc, target.GetAllocator());
  fuzz::check(kube::apply_merge_patch(target, diff).ok() && equal(target, other),
              "the merge patch diff does not turn the first document into the second");
  return 0;
}
