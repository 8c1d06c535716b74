// NodeCache: the cache as the hub sees it (hub::CacheHooks). Owns the LMDB store, the writer
// thread, the cache policy, the offline LocalProxy, and the offline write journal (OfflineWrites
// appends, JournalReplay sends it back to the cloud). Created once by the Hub at startup (an
// unusable cache directory is a startup error), used by every worker thread.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>

#include "base/metrics.h"
#include "cache/autonomy_condition.h"
#include "cache/cache_metrics.h"
#include "cache/cache_policy.h"
#include "cache/cache_writer.h"
#include "cache/callers.h"
#include "cache/journal.h"
#include "cache/journal_replay.h"
#include "cache/local_events.h"
#include "cache/local_proxy.h"
#include "cache/node_authority.h"
#include "cache/offline_writes.h"
#include "cache/store.h"
#include "cache/tap_queue.h"
#include "cache/token_keeper.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::cache {

class NodeCache : public hub::CacheHooks {
 public:
  struct Options {
    // The node this hub runs on: its credentials are `system:node:<node_name>`, whose authority
    // bounds the writes accepted offline (cache/node_authority.h). Empty: nothing is checked.
    std::string node_name;
    StoreOptions store;
    CacheWriter::Options writer;
    LocalProxy::Options offline;
    JournalLimits journal;
    JournalReplay::Options replay;
  };

  static Result<std::unique_ptr<NodeCache>> open(const Options& options,
                                                 base::MetricsRegistry& registry);
  ~NodeCache() override;

  CachePolicy& policy() { return policy_; }
  CacheWriter& writer() { return *writer_; }
  // Waits until the lists relayed so far are digested (at most 60 s) and everything submitted is
  // committed.
  void flush();
  TapQueue& taps() { return *taps_; }
  Store& store() { return *store_; }

  bool cacheable(const kube::RequestInfo& info) const override;
  bool wants_request_body(const kube::RequestInfo& info) const override;
  std::unique_ptr<hub::ResponseTap> tap(const kube::RequestInfo& info, unsigned status,
                                        std::string_view request_body) override;
  bool serves_offline(const kube::RequestInfo& info) const override;
  boost::asio::awaitable<unsigned> serve_offline(const kube::RequestInfo& info,
                                                 hub::ResponseWriter& writer) override;
  bool serves_offline_write(const kube::RequestInfo& info) const override;
  boost::asio::awaitable<unsigned> serve_offline_write(const kube::RequestInfo& info,
                                                       const hub::OfflineWrite& write,
                                                       hub::ResponseWriter& writer) override;
  bool write_pending(const kube::RequestInfo& info) const override;
  void start_replay(hub::ReplayContext context) override;
  // Stops the replay and waits for the writer's tasks, whose completions post to the hub's
  // executors: call after the Hub stopped running and before it is destroyed.
  void stop_replay() override;

  Journal& journal() { return journal_; }
  // Healthy while no error key is kept and the last commit succeeded (error_keys.h); Failing,
  // with a summary of the keys, otherwise. Thread-safe. For the Autonomy condition.
  CacheHealth health() const;

 private:
  NodeCache(std::unique_ptr<Store> store, std::string caller_key, const Options& options,
            base::MetricsRegistry& registry);
  bool is_discovery(const kube::RequestInfo& info) const;
  // tap() for the answer to a write the cache keeps (keeps_answer), and a TokenRequest's.
  std::unique_ptr<hub::ResponseTap> kept_answer_tap(const kube::RequestInfo& info, unsigned status,
                                                    std::string_view request_body,
                                                    const std::string& owner);
  // A list relayed in this run (its key), and whether a watch of `key` must start failed.
  void remember_listed(const std::string& key);
  bool watch_starts_stale(const kube::RequestInfo& info, const std::string& key);
  // Before an offline write: the lists relayed before it are digested (bounded, 2 s).
  boost::asio::awaitable<void> wait_for_lists();
  // A cache agent's write of the node's own objects, or its TokenRequest: the cache keeps the
  // answer.
  bool keeps_answer(const kube::RequestInfo& info) const;
  // A create, update or patch of what kubelet writes about its node: the Node (and its status),
  // its pods' status, its CSINode, its lease.
  static bool node_write(const kube::RequestInfo& info);
  // keeps_answer() for a resource request whose component is known to be a cache agent.
  static bool agent_answer_kept(const kube::RequestInfo& info);
  static bool agent_token_request(const kube::RequestInfo& info);

  // Lists relayed in this run (their records may still be queued for the writer): a watch that
  // resumes one is not taken for a watch on a list the cache lacks.
  static constexpr std::size_t kMaxListedRemembered = 4096;
  std::mutex listed_mutex_;
  std::unordered_set<std::string> listed_;

  std::unique_ptr<Store> store_;
  CacheMetrics metrics_;
  CachePolicy policy_;
  std::unique_ptr<CacheWriter> writer_;
  // Where relayed lists are digested, off the client's path; stopped before writer_ (its jobs
  // submit to it).
  std::unique_ptr<TapQueue> taps_;
  LocalEvents events_;
  Journal journal_;
  LocalProxy local_;
  std::optional<NodeAuthority> authority_;
  IssuerKeys issuer_keys_;
  Callers callers_;
  TokenKeeper tokens_;
  OfflineWrites writes_;
  JournalReplay replay_;
};

}  // namespace yurthub::cache
