// Fuzz target for base/json_frames.h ListFramer, which frames every list response the cache and
// the filters read. Oracle: the input fed whole and fed in small pieces (sizes cycling through a
// period taken from its first byte) gives the same members, items, errors and end; each framed
// item goes through the bounded parse, as the filter chain does.
#include "base/json_frames.h"

#include "base/json_parse.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

// Everything a framer reported, in order, as text.
class Recorder final : public base::ListSink {
 public:
  std::string log;

  void member(std::string_view key, std::string_view raw) override {
    log.append("member ").append(key).append("=").append(raw).append("\n");
  }
  void items_begin() override { log += "items[\n"; }
  void item(std::string_view raw) override {
    log.append("item ").append(raw).append("\n");
    rapidjson::Document doc;
    (void)base::parse_json(raw, doc);
  }
  void items_end() override { log += "]items\n"; }
  void end() override { log += "end\n"; }
};

std::string frame(const std::vector<std::string_view>& pieces) {
  Recorder sink;
  base::ListFramer framer(sink, 1 << 16);
  std::string outcome = "ok";
  for (std::string_view piece : pieces) {
    if (Status s = framer.feed(piece); !s) {
      outcome = s.error().message;
      break;
    }
  }
  return sink.log + outcome + (framer.done() ? " done" : " open");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_split_invariance(data, size, frame);
  return 0;
}
