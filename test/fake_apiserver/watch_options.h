// The watch options a streaming list (KEP-3157, "WatchList") is made of, decided as
// kube-apiserver decides them: with WatchList enabled (1.32, 1.34+; apimachinery v0.27-v0.36
// validateWatchOptions and the defaulting of internalversion/defaults.go), or as v1.26, which
// knows no sendInitialEvents and refuses resourceVersionMatch on every watch (422). The fake's
// own reading of the apimachinery source, independent of the hub's (kube/watch_list.h). Pure.
#pragma once

#include <optional>
#include <variant>

#include "test/fake_apiserver/request_path.h"
#include "test/fake_apiserver/status.h"

namespace yurthub::fake {

struct WatchOptions {
  // sendInitialEvents as sent, or defaulted to true (a watch from "" or "0" with no
  // resourceVersionMatch, on a WatchList server); nullopt: a legacy watch (v1.26, or from N).
  std::optional<bool> send_initial_events;
};

// The options of a watch request, or the 422 Invalid a real apiserver answers them with.
// `watch_list`: the apiserver has WatchList enabled.
std::variant<WatchOptions, Reply> decide_watch_options(const Query& query, bool watch_list);

}  // namespace yurthub::fake
