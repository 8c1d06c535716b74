// The checks Forwarder::prepare makes on a request head before sending it on: which of the
// headers it acts on are there at all (one pass over the fields), whether Connection names a
// framing header, and the strip of headers that would borrow the node's identity.
#pragma once

#include "net/header_arena.h"

namespace yurthub::hub {

// Which headers a request carries, of those prepare() acts on. Found in one pass: each
// fields.find() is a search of Beast's field tree by case-insensitive name, and prepare() made
// six of them for a request that, most of the time, carries none of these headers.
struct RequestHeadFields {
  bool connection = false;
  bool upgrade = false;
  bool authorization = false;
  bool replay = false;         // kReplayHeader (hub/hooks/cache_hooks.h)
  bool impersonation = false;  // a header whose name starts with "Impersonate-"
};
RequestHeadFields scan_request_fields(const net::ArenaFields& fields);

// Whether the request's Connection header names a header that frames or routes it. The hub frames
// the body from its parser anyway (net::strip_hop_by_hop with net::BodyFraming), but such a request
// is no honest client's: its upstream connection is not reused and the client's connection is
// closed after it.
bool names_framing_in_connection(const net::ArenaFields& fields);

// Drops the headers that would let a caller act as someone else with the identity the hub lends
// it: impersonation, and (when the hub's own credentials are used) any Authorization it brought.
void strip_borrowed_identity(net::ArenaFields& fields);

}  // namespace yurthub::hub
