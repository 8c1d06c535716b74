// Fuzz target for base/json_frames.h WatchFramer, which frames every watch stream the cache and
// the filters read. Oracle: the input fed whole and fed in small pieces (sizes cycling through a
// period taken from its first byte) gives the same events and the same error; each event goes
// through the bounded parse, as the filter chain does.
#include "base/json_frames.h"

#include "base/json_parse.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

std::string frame(const std::vector<std::string_view>& pieces) {
  base::WatchFramer framer(1 << 16);
  std::string log;
  auto on_event = [&](std::string_view raw) {
    log.append("event ").append(raw).append("\n");
    rapidjson::Document doc;
    (void)base::parse_json(raw, doc);
  };
  for (std::string_view piece : pieces) {
    if (Status s = framer.feed(piece, on_event); !s) return log + s.error().message;
  }
  return log + "ok";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_split_invariance(data, size, frame);
  return 0;
}
