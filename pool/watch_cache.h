// WatchCache: the node's one copy of a pool-scope resource (Services, EndpointSlices), as the
// apiserver's watch cache keeps it: the current objects, the resourceVersion they are at, and a
// window of recent events from which a watch resumes. It is the sink of that resource's one
// upstream list+watch (net::Reflector, fed by pool::SharedCache), and every local client's list
// and watch of the resource is answered from it (pool/shared_serving.h).
//
// A re-list (after 410, or when the source changed) is not a break for the clients: its
// difference from what the cache held becomes ADDED, MODIFIED and DELETED events, so a watch
// opened before goes on and no client re-lists. A DELETED object found only by the difference
// carries the list's resourceVersion, so a client's resourceVersion never goes backwards.
//
// Objects are kept as their JSON text (a list item: without kind and apiVersion), not parsed,
// so the cache costs about the size of the objects; selectors parse an object when they need to.
// Thread-safe: the reflector's sink calls come from worker 0; lists and watches read from every
// worker. Subscriptions are woken through their waker (the ResponseWriter's).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "net/reflector.h"

namespace yurthub::pool {

struct CachedObject {
  std::string key;  // "namespace/name", or "name" when cluster-scoped
  std::string namespace_name;
  std::string name;
  std::uint64_t resource_version = 0;
  std::string json;  // the object as a list item: no kind, no apiVersion
};
using ObjectPtr = std::shared_ptr<const CachedObject>;

struct CacheEvent {
  enum class Type { Added, Modified, Deleted };
  Type type = Type::Added;
  // Where the event sits in the cache's history: a watch from resourceVersion N gets the events
  // with position > N. The object's own resourceVersion, except for events found by a re-list's
  // difference, which sit at the list's.
  std::uint64_t position = 0;
  ObjectPtr object;    // the state after (for Deleted: the last state)
  ObjectPtr previous;  // the state before; null for Added
};
using EventPtr = std::shared_ptr<const CacheEvent>;

// The objects at one resourceVersion, sorted by key; immutable once made.
struct CacheSnapshot {
  std::uint64_t resource_version = 0;
  std::string kind;         // of one object, e.g. "Service"
  std::string api_version;  // e.g. "v1", "discovery.k8s.io/v1"
  std::vector<ObjectPtr> objects;
};

class WatchCache : public net::ReflectorSink {
 public:
  struct Options {
    std::string name;  // for logs and metrics: "discovery.k8s.io/v1/endpointslices"
    // The window of events a watch can resume from: at most this many, none older than `age`
    // (the apiserver's default event window is about as long).
    std::size_t window_events = 10000;
    std::chrono::seconds window_age{180};
    // And no more bytes of objects than this (an event holds its object and the state before):
    // a burst that changes every object would otherwise keep the whole set twice more.
    std::size_t window_bytes = std::size_t{4} << 20;
    // Events a subscription may hold unread before it is dropped (its client then re-watches).
    std::size_t max_pending = 10000;
  };

  // One watch's inbox of events after it subscribed.
  class Subscription {
   public:
    std::vector<EventPtr> take();
    bool overflowed() const;

   private:
    friend class WatchCache;
    std::function<void()> wake_;
    std::size_t max_pending_ = 0;
    mutable std::mutex mutex_;  // guards pending_, overflowed_
    std::deque<EventPtr> pending_;
    bool overflowed_ = false;
  };

  // What a watch starts with.
  struct Start {
    bool expired = false;                          // `from` is older than the window: 410
    std::vector<EventPtr> backlog;                 // events after `from`, in order
    std::shared_ptr<const CacheSnapshot> initial;  // without `from`: the objects, as ADDED
    std::shared_ptr<Subscription> subscription;    // what comes next
  };

  explicit WatchCache(Options options);

  bool synced() const;
  std::uint64_t resource_version() const;
  // The current objects (made once per change, shared by the lists that follow).
  std::shared_ptr<const CacheSnapshot> snapshot() const;
  // A watch from resourceVersion `from` (nullopt: from the current objects). `wake` is called
  // from the feeding thread whenever events arrive.
  Start watch(std::optional<std::uint64_t> from, std::function<void()> wake);
  // Kind and apiVersion of the objects, for events and bookmarks ("" before the first list).
  std::string kind() const;
  std::string api_version() const;

  // net::ReflectorSink, called on the reflector's executor.
  Status listed(std::string_view body, std::string* resource_version) override;
  net::EventVerdict event(std::string_view raw, std::string* resource_version,
                          std::string* reason) override;
  void events_done() override;

  // Counters for metrics and tests.
  std::uint64_t events_received() const;
  std::uint64_t events_delivered() const;  // events handed to subscriptions
  std::size_t subscribers() const;

 private:
  // REQUIRES: mutex_ held. Records `event` in the window and hands it to every subscription.
  void emit(const EventPtr& event);
  void trim_window();

  Options options_;
  mutable std::mutex mutex_;
  std::map<std::string, ObjectPtr> objects_;
  std::uint64_t resource_version_ = 0;
  bool synced_ = false;
  std::string kind_, api_version_;
  struct Recorded {
    EventPtr event;
    std::chrono::steady_clock::time_point at;
    std::size_t bytes = 0;
  };
  std::deque<Recorded> window_;
  std::size_t window_bytes_ = 0;
  // A watch may resume from any resourceVersion >= this one (the window holds what follows).
  std::uint64_t window_start_ = 0;
  mutable std::shared_ptr<const CacheSnapshot> snapshot_;  // of the current objects, or null
  std::vector<std::weak_ptr<Subscription>> subscriptions_;
  std::vector<std::shared_ptr<Subscription>> to_wake_;  // after the events of one piece
  std::uint64_t received_ = 0;
  std::uint64_t delivered_ = 0;
};

}  // namespace yurthub::pool
