// Protobuf reading for CSR approvals; see csr_protobuf.h. Field numbers are those of
// k8s.io/api/certificates/v1/generated.proto and apimachinery's runtime.Unknown, ObjectMeta and
// Time (Timestamp: seconds = 1, nanos = 2).
#include "test/fake_apiserver/csr_protobuf.h"

#include <cstdint>
#include <ctime>
#include <string>

namespace yurthub::fake {
namespace {

// One protobuf message's fields, read one at a time.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  bool failed() const { return failed_; }

  // The next field: its number, and its bytes (length-delimited) or varint value.
  bool next(int& field, std::string_view& bytes, std::uint64_t& varint) {
    std::uint64_t key = 0;
    if (!read_varint(key)) return false;
    field = static_cast<int>(key >> 3);
    switch (key & 7) {
      case 0:
        return read_varint(varint);
      case 2: {
        std::uint64_t len = 0;
        if (!read_varint(len) || len > data_.size() - pos_) return fail();
        bytes = data_.substr(pos_, len);
        pos_ += len;
        return true;
      }
      case 1:
        return skip(8);
      case 5:
        return skip(4);
      default:
        return fail();
    }
  }

 private:
  bool fail() {
    failed_ = true;
    return false;
  }
  bool skip(std::size_t n) {
    if (n > data_.size() - pos_) return fail();
    pos_ += n;
    return true;
  }
  bool read_varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return fail();
      auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return fail();
  }

  std::string_view data_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

void add_string(rapidjson::Value& obj, const char* key, std::string_view v,
                rapidjson::Document::AllocatorType& a) {
  obj.AddMember(rapidjson::StringRef(key),
                rapidjson::Value(v.data(), static_cast<rapidjson::SizeType>(v.size()), a), a);
}

// A metav1.Time as RFC 3339, or "" for Go's zero time (which marshals as year 1).
std::string time_of(std::string_view bytes) {
  Reader r(bytes);
  int field = 0;
  std::string_view b;
  std::uint64_t v = 0;
  std::int64_t seconds = 0;
  while (!r.done() && r.next(field, b, v)) {
    if (field == 1) seconds = static_cast<std::int64_t>(v);
  }
  if (seconds <= 0) return "";
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool condition(std::string_view bytes, rapidjson::Value& out,
               rapidjson::Document::AllocatorType& a) {
  Reader r(bytes);
  int field = 0;
  std::string_view b;
  std::uint64_t v = 0;
  std::string type, status, reason, message, updated, transitioned;
  while (!r.done() && r.next(field, b, v)) {
    switch (field) {
      case 1:
        type = b;
        break;
      case 2:
        reason = b;
        break;
      case 3:
        message = b;
        break;
      case 4:
        updated = time_of(b);
        break;
      case 5:
        transitioned = time_of(b);
        break;
      case 6:
        status = b;
        break;
      default:
        break;
    }
  }
  out.SetObject();
  add_string(out, "type", type, a);
  add_string(out, "status", status, a);
  if (!reason.empty()) add_string(out, "reason", reason, a);
  if (!message.empty()) add_string(out, "message", message, a);
  if (!updated.empty()) add_string(out, "lastUpdateTime", updated, a);
  if (!transitioned.empty()) add_string(out, "lastTransitionTime", transitioned, a);
  return !r.failed();
}

}  // namespace

Result<rapidjson::Document> decode_csr_protobuf(std::string_view body) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic)) return make_error("protobuf body without the k8s magic");
  Reader unknown(body.substr(kMagic.size()));
  int field = 0;
  std::string_view bytes, raw;
  std::uint64_t v = 0;
  while (!unknown.done() && unknown.next(field, bytes, v)) {
    if (field == 2) raw = bytes;
  }
  if (unknown.failed() || raw.empty()) return make_error("malformed runtime.Unknown");
  rapidjson::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  rapidjson::Value metadata(rapidjson::kObjectType), conditions(rapidjson::kArrayType);
  Reader csr(raw);
  while (!csr.done() && csr.next(field, bytes, v)) {
    if (field == 1) {  // ObjectMeta: name 1, uid 5, resourceVersion 6
      Reader meta(bytes);
      std::string_view m;
      while (!meta.done() && meta.next(field, m, v)) {
        if (field == 1) add_string(metadata, "name", m, a);
        if (field == 5) add_string(metadata, "uid", m, a);
        if (field == 6) add_string(metadata, "resourceVersion", m, a);
      }
    } else if (field == 3) {  // status: conditions 1
      Reader status(bytes);
      std::string_view c;
      while (!status.done() && status.next(field, c, v)) {
        if (field != 1) continue;
        rapidjson::Value cond;
        if (!condition(c, cond, a)) return make_error("malformed condition");
        conditions.PushBack(cond, a);
      }
    }
  }
  if (csr.failed()) return make_error("malformed CertificateSigningRequest");
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("conditions", conditions, a);
  doc.AddMember("metadata", metadata, a);
  doc.AddMember("status", status, a);
  return doc;
}

}  // namespace yurthub::fake
