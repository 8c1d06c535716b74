// Fuzz target for what the cache reads back from LMDB about each cached list: the record
// (cache/store_codec.h decode_list_record, read by every offline list and watch and by `yurthub
// cache ls`) and its key (cache/list_identity.h ListIdentity::parse and store_codec.h
// printable_identity, read back by lists_with_prefix), and an object's key (store_codec.h
// split_object_key, read back by every scan of a set). The file is on a disk the hub does not own
// alone, and may hold a record of another version or a torn one. The input is read as a record,
// as an identity key and as an object key. Oracles: a decoded record encodes to exactly the bytes
// it was read from (the format has one spelling of each record); a parsed key writes back to
// itself.
#include "cache/list_identity.h"
#include "cache/store_codec.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = fuzz::as_text(data, size);
  if (auto record = cache::decode_list_record(in)) {
    fuzz::check(cache::encode_list_record(*record) == in, "a record that does not encode back");
    fuzz::check(record->list_kind.size() + record->api_version.size() <= size,
                "a record's text longer than the record");
  }
  if (auto identity = cache::ListIdentity::parse(in)) {
    fuzz::check(identity->key() == in, "a key that does not write back");
    (void)identity->describe();
    (void)identity->is_get_set();
  }
  if (auto parts = cache::split_object_key(in)) {
    const auto set = static_cast<std::uint32_t>(cache::read_be(in, 4));
    fuzz::check(cache::object_key(set, parts->first, parts->second) == in,
                "an object key that does not write back");
  }
  (void)cache::printable_identity(in);
  return 0;
}
