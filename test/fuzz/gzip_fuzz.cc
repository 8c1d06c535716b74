// Fuzz target for base/gzip.h GzipDecoder, which inflates gzipped apiserver responses for the cache
// and the filters. Oracle: the input fed whole and fed in small pieces (sizes cycling through a
// period taken from its first byte) decodes to the same bytes, or fails with the same error; the
// output bound holds.
#include "base/gzip.h"

#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

constexpr std::size_t kMaxOutput = 1 << 20;

std::string decode(const std::vector<std::string_view>& pieces) {
  base::GzipDecoder decoder(kMaxOutput);
  std::string out;
  for (std::string_view piece : pieces) {
    // What was decoded before an error may depend on where the pieces end; the error may not.
    if (Status s = decoder.feed(piece, out); !s) return "error: " + s.error().message;
  }
  fuzz::check(out.size() <= kMaxOutput, "output over the bound");
  return out + (decoder.done() ? "\ndone" : "\nopen");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_split_invariance(data, size, decode);
  return 0;
}
