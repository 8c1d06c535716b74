// Corrections of a filtered watch while it is relayed. When what the filters read changes (a
// Service's topology annotation, this node's pool), the hub asks each open reactive watch for
// corrected events (ResponseFilter::correct) and sends them to its client between the events the
// apiserver sends:
//   - if the relay is waiting for the apiserver, the client side is idle: a correction writer
//     coroutine writes the events as one chunk at once; the relay waits for it before its next
//     write (ActiveExchange::correction_writer_running);
//   - otherwise the relay is writing: the correction stays pending, and the relay corrects after
//     that write.
// Which of the two (or a local answer's wake-up) is decided by
// ActiveExchange::request_correction.
// A filter that cannot correct (it did not keep the objects) makes the relay end the watch with
// a 410 Expired event, so the client re-lists. Used by ProxySession (on_filters_changed) and
// ResponseRelay; worker-thread only.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/co_spawn.hpp>

#include "hub/body_transform.h"
#include "hub/client_connection.h"
#include "hub/client_stream.h"
#include "hub/hooks/filter_status.h"
#include "net/http_framing.h"
#include "net/spawn.h"

namespace yurthub::hub {

namespace watch_corrections_detail {
template <class Stream>
boost::asio::awaitable<void> write_corrections(std::shared_ptr<ClientConnection<Stream>> client) {
  ActiveExchange& a = client->active;
  std::string events;
  while (a.writer_takes_correction()) {
    events.clear();
    const FilterStatus status = a.body()->correct(&events);
    if (const auto end = stream_end_of(status)) {
      // The relay sends the 410 event (or cuts the stream) once its read is aborted.
      a.stop(*end);
      break;
    }
    // Hold: nothing to correct. (An empty chunk would end the stream for the client.)
    if (status == FilterStatus::Hold || events.empty()) continue;
    const std::string framed = a.chunked() ? net::http_chunk(events) : events;
    if (!co_await write_streaming(client, boost::asio::buffer(framed))) {
      a.stop(StreamEnd::ClientGone);
      break;
    }
  }
  a.correction_writer_done();
  client->wake_timer.cancel();  // the relay may be waiting for this writer to finish
}
}  // namespace watch_corrections_detail

// The filters' inputs changed: has a reactive filtered watch on this connection corrected.
template <class Stream>
void request_corrections(const std::shared_ptr<ClientConnection<Stream>>& client) {
  if (client->active.request_correction() != ActiveExchange::CorrectionRoute::SpawnWriter) return;
  net::spawn_detached(client->wake_timer.get_executor(),
                      watch_corrections_detail::write_corrections(client), "watch corrections");
}

// The relay's side: waits until no correction writer is running.
template <class Stream>
boost::asio::awaitable<void> wait_for_correction_writer(ClientConnection<Stream>& client) {
  while (client.active.correction_writer_running()) {
    client.wake_timer.expires_after(kClientIoTimeout);
    co_await client.wake_timer.async_wait(net::kNoThrow);
  }
}

}  // namespace yurthub::hub
