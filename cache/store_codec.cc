// Byte encodings of the LMDB store; see store_codec.h.
#include "cache/store_codec.h"

#include "cache/list_identity.h"

namespace yurthub::cache {
namespace {

constexpr std::uint8_t kListRecordVersion = 1;
constexpr std::uint8_t kFlagComplete = 1;
constexpr std::uint8_t kFlagStale = 2;

}  // namespace

void append_be(std::string& out, std::uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

std::uint64_t read_be(std::string_view in, std::size_t bytes) {  // REQUIRES: in.size() >= bytes
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value = (value << 8) | static_cast<std::uint8_t>(in[i]);
  return value;
}

std::string u32_value(std::uint32_t value) {
  std::string out;
  append_be(out, value, 4);
  return out;
}

std::string set_prefix(std::uint32_t set) { return u32_value(set); }

std::string object_key(std::uint32_t set, std::string_view namespace_name, std::string_view name) {
  std::string key = set_prefix(set);
  key.reserve(4 + namespace_name.size() + 1 + name.size());
  key += namespace_name;
  key += '\0';
  key += name;
  return key;
}

std::optional<std::pair<std::string_view, std::string_view>> split_object_key(
    std::string_view key) {
  constexpr std::size_t kSetBytes = 4;
  if (key.size() < kSetBytes) return std::nullopt;
  const std::size_t separator = key.find('\0', kSetBytes);
  if (separator == std::string_view::npos) return std::nullopt;
  return std::pair{key.substr(kSetBytes, separator - kSetBytes), key.substr(separator + 1)};
}

std::string encode_list_record(const ListRecord& record) {
  std::string out;
  out.reserve(34 + record.list_kind.size() + record.api_version.size());
  out.push_back(static_cast<char>(kListRecordVersion));
  out.push_back(
      static_cast<char>((record.complete ? kFlagComplete : 0) | (record.stale ? kFlagStale : 0)));
  append_be(out, record.set_id, 4);
  append_be(out, record.staging_id, 4);
  append_be(out, record.resource_version, 8);
  append_be(out, static_cast<std::uint64_t>(record.synced_unix), 8);
  for (const std::string* text : {&record.list_kind, &record.api_version}) {
    append_be(out, text->size(), 4);
    out += *text;
  }
  return out;
}

namespace {

// Consumes a byte string front to back; any short read makes ok() false.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : rest_(in) {}
  std::uint64_t integer(std::size_t bytes) {
    if (!ok_ || rest_.size() < bytes) return fail();
    const std::uint64_t value = read_be(rest_, bytes);
    rest_.remove_prefix(bytes);
    return value;
  }
  std::string text() {
    const std::uint64_t size = integer(4);
    if (!ok_ || rest_.size() < size) return fail(), std::string();
    std::string out(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return out;
  }
  bool ok_and_done() const { return ok_ && rest_.empty(); }

 private:
  std::uint64_t fail() {
    ok_ = false;
    return 0;
  }
  std::string_view rest_;
  bool ok_ = true;
};

}  // namespace

std::optional<ListRecord> decode_list_record(std::string_view in) {
  ByteReader reader(in);
  if (reader.integer(1) != kListRecordVersion) return std::nullopt;
  const std::uint64_t flags = reader.integer(1);
  if ((flags & ~std::uint64_t{kFlagComplete | kFlagStale}) != 0) return std::nullopt;
  ListRecord record;
  record.complete = (flags & kFlagComplete) != 0;
  record.stale = (flags & kFlagStale) != 0;
  record.set_id = static_cast<std::uint32_t>(reader.integer(4));
  record.staging_id = static_cast<std::uint32_t>(reader.integer(4));
  record.resource_version = reader.integer(8);
  record.synced_unix = static_cast<std::int64_t>(reader.integer(8));
  record.list_kind = reader.text();
  record.api_version = reader.text();
  if (!reader.ok_and_done()) return std::nullopt;
  return record;
}

std::string printable_identity(std::string_view key) {
  if (auto identity = ListIdentity::parse(key)) return identity->describe();
  std::string out(key);
  for (char& c : out) c = c == '\0' ? '/' : c;
  return out;
}

}  // namespace yurthub::cache
