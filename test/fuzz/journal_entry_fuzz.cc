// Fuzz target for cache/journal_entry.h, the codec of the offline write journal's entries, read
// back from the store at every start and by `yurthub journal ls`. Oracle: whatever decodes
// encodes to bytes that decode to the same entry.
#include "cache/journal_entry.h"

#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto entry = cache::decode_journal_entry(7, fuzz::as_text(data, size));
  if (!entry) return 0;
  const auto again = cache::decode_journal_entry(7, cache::encode_journal_entry(*entry));
  fuzz::check(again.has_value() && *again == *entry, "an entry does not survive encode + decode");
  (void)cache::journal_entry_bytes(*entry);
  return 0;
}
