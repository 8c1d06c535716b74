// FilteringWriter: a ResponseWriter that runs a locally answered list or watch through the
// client's own filters (the same ResponseFilter a relayed response goes through), so an answer
// from the pool's shared watch cache looks as the client's filtered upstream response would: a
// list's items filtered, each watch event filtered (an object dropped that the client was shown
// becomes DELETED), and a reactive watch corrected when the filters' inputs change
// (watch_corrections.h marks the connection; the corrections are written when its wait wakes).
// Used by the Forwarder for answers from SharedCacheHooks; worker-thread only.
#pragma once

#include <string>

#include "hub/client_connection.h"
#include "hub/hooks/cache_hooks.h"
#include "hub/hooks/filter_hooks.h"
#include "hub/hooks/filter_status.h"
#include "kube/status.h"

namespace yurthub::hub {

class FilteringWriter final : public ResponseWriter {
 public:
  // `watch`: every write() is one whole watch event; else the writes are a list's bytes.
  FilteringWriter(ResponseWriter& inner, ResponseFilter& filter, ActiveExchange& active, bool watch)
      : inner_(inner), filter_(filter), active_(active), watch_(watch) {
    if (watch_) active_.local_filter(&filter_);  // request_corrections() looks for it
  }
  ~FilteringWriter() override { active_.local_filter(nullptr); }
  FilteringWriter(const FilteringWriter&) = delete;
  FilteringWriter& operator=(const FilteringWriter&) = delete;

  boost::asio::awaitable<bool> start(unsigned status, std::string_view content_type) override {
    return inner_.start(status, content_type);
  }

  boost::asio::awaitable<bool> write(std::string_view bytes) override {
    out_.clear();
    FilterStatus status = FilterStatus::Hold;
    if (watch_) {
      // The filter takes one event's JSON text, as the hub's framer cuts it, and ends what it
      // writes with its own newline; the shared cache's events carry theirs.
      if (bytes.ends_with('\n')) bytes.remove_suffix(1);
      status = filter_.event(bytes, &out_);
    } else {
      status = filter_.feed(bytes, &out_);
    }
    // Relist is not an answer feed() gives; either way the client must not get it unfiltered.
    if (stream_end_of(status)) cut_ = true;
    if (status == FilterStatus::Hold) out_.clear();  // nothing for the client yet
    if (cut_) co_return false;
    if (out_.empty()) co_return true;
    co_return co_await inner_.write(out_);
  }

  boost::asio::awaitable<bool> finish() override {
    out_.clear();
    // A plain local, not a call in the condition: g++ 12 laid this coroutine's frame out wrong
    // with `if (filter_.finish(&out_) == FilterStatus::Cut) co_return false;` (its `this` was
    // read from where it was not stored: the hub crashed on a filtered list from the pool).
    FilterStatus finished = FilterStatus::Send;
    if (!watch_ && !cut_) finished = filter_.finish(&out_);
    if (cut_ || finished == FilterStatus::Cut) co_return false;
    if (!out_.empty() && !co_await inner_.write(out_)) co_return false;
    co_return co_await inner_.finish();
  }

  boost::asio::awaitable<std::optional<StreamEnd>> wait_until(
      std::chrono::steady_clock::time_point deadline) override {
    auto reason = co_await inner_.wait_until(deadline);
    if (reason || !active_.take_correction()) co_return reason;
    out_.clear();
    const FilterStatus status = filter_.correct(&out_);
    const std::optional<StreamEnd> end = stream_end_of(status);
    if (status == FilterStatus::Hold) out_.clear();  // nothing to correct
    if (end == StreamEnd::FilterRelist) co_await inner_.write(relist_event());
    if (end) co_return end;
    if (!out_.empty() && !co_await inner_.write(out_)) co_return StreamEnd::ClientGone;
    co_return std::nullopt;
  }

  std::function<void()> waker() override { return inner_.waker(); }

 private:
  // What a client that must re-list gets: the apiserver's own way of saying "start over".
  static const std::string& relist_event() {
    static const std::string relist = kube::watch_error_event(
        kube::api_error(kube::Failure::Expired, "what the hub's filters read changed; list again"));
    return relist;
  }

  ResponseWriter& inner_;
  ResponseFilter& filter_;
  ActiveExchange& active_;
  bool watch_;
  bool cut_ = false;
  std::string out_;
};

}  // namespace yurthub::hub
