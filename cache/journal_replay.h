// JournalReplay: sends the offline write journal to the cloud once an apiserver is healthy again
// (design §6; docs/offline-semantics.md, "Replay"). Runs as one coroutine on worker 0:
//   - every second, when the journal is not empty and a server is healthy, one pass over the
//     entries in sequence order; entries of one object go strictly in order (an object whose
//     entry must be retried waits for the next pass), entries of different objects do not wait
//     for each other;
//   - each entry goes through the hub's own proxy port with the User-Agent and Authorization of
//     the client that wrote it, and header X-Yurthub-Replay;
//   - a patch is re-sent as is; an update is re-sent as is and, on 409 Conflict (the cloud's
//     object moved on), is re-based as a client would (replay_rebase.h): the cloud's object is
//     read again, and the client's change made on it and PUT with the cloud's resourceVersion,
//     unless the cloud changed the same fields (then it is dropped); an event create that gets
//     409 already exists;
//   - the entry leaves the journal (in a CacheWriter task) when the cloud took it or refused it
//     for good (403, 404, 422, other 4xx but 401, 409 and 429); 5xx, 429, 409, 401 and network
//     errors retry with backoff (1 s doubling to 30 s); a 409 or 401 that persists for
//     max_conflict_attempts is dropped. Every drop is logged as an error and counted by reason.
// At least once: an entry whose deletion did not commit (kill -9) is sent again, and patches and
// merges are idempotent.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>

#include <boost/asio/awaitable.hpp>

#include "cache/cache_writer.h"
#include "cache/journal.h"
#include "cache/store.h"
#include "hub/hooks/cache_hooks.h"
#include "net/local_client.h"
#include "net/timer.h"

namespace yurthub::cache {

class JournalReplay {
 public:
  struct Options {
    std::chrono::milliseconds idle_poll{1000};
    std::chrono::milliseconds backoff_initial{1000};
    std::chrono::milliseconds backoff_max{30000};
    std::chrono::milliseconds request_timeout{30000};
    int max_conflict_attempts = 10;
  };

  // The caller stops the loop (stop()) while the executor still runs; otherwise the loop just
  // ends with the executor's io_context.
  JournalReplay(Store& store, CacheWriter& writer, Journal& journal, Options options);

  // Starts the loop on context.executor. Once.
  void start(hub::ReplayContext context);
  // Ends the loop (at its next step). Thread-safe. The caller then waits for the writer's tasks
  // (CacheWriter::wait_tasks) before the executor is destroyed.
  void stop();

 private:
  enum class Outcome { Replayed, Retry, Dropped };
  struct Attempt {
    Outcome outcome;
    std::string detail;                        // for the log: the status or error
    DropReason reason = DropReason::Rejected;  // when Dropped
  };

  boost::asio::awaitable<void> run();
  boost::asio::awaitable<bool> pass();  // false when an entry must be retried
  boost::asio::awaitable<Attempt> replay(const JournalEntry& entry);
  // Sends `entry` (or what it became) through the proxy port with its client's headers.
  boost::asio::awaitable<Result<net::LocalResponse>> send(const JournalEntry& entry,
                                                          std::string method,
                                                          std::string content_type,
                                                          std::string body);
  boost::asio::awaitable<Attempt> merge_stale_update(const JournalEntry& entry);
  Attempt judge(const JournalEntry& entry, unsigned status, const std::string& body);
  boost::asio::awaitable<void> remove(std::uint64_t seq, const char* outcome);
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds how_long);

  Store& store_;
  CacheWriter& writer_;
  Journal& journal_;
  Options options_;
  hub::ReplayContext context_;
  net::Timer* timer_ = nullptr;             // the loop's own, while it runs (executor only)
  std::map<std::uint64_t, int> conflicts_;  // seq -> 409s so far (loop only)
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};
};

}  // namespace yurthub::cache
