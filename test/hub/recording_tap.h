// test_support::RecordingTap: a hub::ResponseTap that keeps everything it is handed (the body,
// each framed event, how it ended), for the tests of what the relay and the body transform hand
// the cache. Header-only; used by test/hub/body_transform_test.cc and
// test/hub/response_relay_streams_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/json_frames.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::test_support {

class RecordingTap : public hub::ResponseTap {
 public:
  void body(std::string_view bytes) override { got += bytes; }
  void event(std::string_view raw) override { events.emplace_back(raw); }
  void events_done() override { ++batches; }
  void unframeable(std::string_view why) override { unframed = why; }
  void end(bool complete_body) override {
    ended = true;
    complete = complete_body;
  }
  bool failed() const override { return fail; }
  base::ListSink* list_sink() override { return sink; }

  std::string got;                  // the body, as handed over
  std::vector<std::string> events;  // each framed event
  int batches = 0;                  // events_done() calls
  std::string unframed;             // why the body could not be framed, if it could not
  bool ended = false;
  bool complete = false;           // what end() was told
  bool fail = false;               // what failed() answers
  base::ListSink* sink = nullptr;  // what list_sink() answers
};

}  // namespace yurthub::test_support
