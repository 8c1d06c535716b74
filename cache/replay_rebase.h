// Re-basing an update made offline that the cloud refused with 409 Conflict (its object moved on
// meanwhile), as a client would: read the object again and make its change on the new version,
// which kubelet's own retry loops do. The journal's replay (journal_replay.cc) reads the cloud's
// current object and calls this. Optimistic concurrency is kept, never defeated:
//   - the client's change (what it saw -> what it sent) and the cloud's change (what the client
//     saw -> what the cloud has now) are compared field by field; when both changed a field, the
//     update is a real conflict and is dropped (and alerted), never forced;
//   - otherwise the client's change is applied to the cloud's object, which is PUT with the
//     cloud's resourceVersion, so a third writer in between is again a 409.
// Only what the target writes counts: `status` for a /status update, everything else otherwise;
// fields only the apiserver sets (resourceVersion, uid, generation, managedFields,
// creationTimestamp) never. Pure; unit-tested in test/cache/replay_rebase_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace yurthub::cache {

struct Rebase {
  enum class Kind {
    Put,         // send `body` (the cloud's object with the client's change) as the update
    Nothing,     // the client's change is already in the cloud's object: nothing to send
    Conflict,    // both changed the same fields (`detail` names them): drop the update
    Unreadable,  // one of the three is not a JSON object
  };
  Kind kind = Kind::Unreadable;
  std::string body;
  std::string detail;
};

Rebase rebase_update(std::string_view base, std::string_view sent, std::string_view current,
                     bool status_write);

}  // namespace yurthub::cache
