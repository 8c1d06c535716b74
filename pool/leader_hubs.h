// LeaderHubs: a follower hub's choice of where its shared cache feeds from. While ConfigMap
// leader-hub-<pool> asks for it (enable-leader-election "true", leaders named, and this node not
// one of them; YurtHub's rule), each leader's multiplexer port (https://<ip>:--multiplexer-port)
// is probed with GET /healthz over mutual TLS (the node's client certificate; the leader's
// certificate must chain to the cluster CA and name the IP) every `interval`, each probe bounded
// by `timeout`. The leader answers 200 only while it reaches the cloud and its copies are synced.
// One failed probe drops a leader at once; `healthy_threshold` successes in a row take it back
// (the first probe decides at once). The source is the current leader while it stays healthy,
// else the first healthy one in the ConfigMap's order, else the cloud (the hub's own port). Each
// change calls `on_change`, and the shared cache reconnects its reflectors: a watch resumes from
// its resourceVersion at the new source, so no local watch ends.
//
// Runs on one executor (worker 0): set_leaders, current and the callback run there; stop() may be
// called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "base/metrics.h"
#include "net/source_stream.h"
#include "net/tls.h"

namespace yurthub::pool {

struct LeaderHub {
  std::string node;
  std::string ip;
  bool operator==(const LeaderHub&) const = default;
};

struct LeaderHubsSettings {
  std::string node_name;
  unsigned short port = 10269;                   // --multiplexer-port
  std::shared_ptr<net::ReplaceableContext> tls;  // the node's client identity
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds timeout{1000};
  int healthy_threshold = 2;
};

// Which of `leaders` a follower uses, by YurtHub's rule: none when election is off, no leader is
// named, or this node is one of them.
std::vector<LeaderHub> leaders_to_follow(const std::vector<LeaderHub>& leaders,
                                         bool leader_election, const std::string& node_name);

class LeaderHubs {
 public:
  LeaderHubs(boost::asio::any_io_executor executor, LeaderHubsSettings settings,
             base::MetricsRegistry& metrics, std::function<void()> on_change);
  ~LeaderHubs();
  LeaderHubs(const LeaderHubs&) = delete;
  LeaderHubs& operator=(const LeaderHubs&) = delete;

  // The leaders to follow from now on (leaders_to_follow's answer); empty: the cloud.
  void set_leaders(std::vector<LeaderHub> leaders);
  // Where the shared cache feeds from now: a leader, or nullopt for the cloud.
  std::optional<net::SourceAddress> current() const;
  void stop();
  const std::string& node_name() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace yurthub::pool
