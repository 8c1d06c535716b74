// The cache's tap queue and the deferred taps that use it; see tap_queue.h.
#include "cache/tap_queue.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "base/json_frames.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "net/http_io.h"
#include "net/timer.h"

namespace yurthub::cache {

TapQueue::TapQueue(std::size_t max_bytes, base::Gauge* queued, std::chrono::milliseconds hold_limit)
    : max_bytes_(max_bytes), hold_limit_(hold_limit), queued_gauge_(queued), thread_([this] {
        base::name_this_thread("yh-cache-tap");
        run();
      }) {}

void TapQueue::show_queued() {
  if (queued_gauge_) queued_gauge_->set(static_cast<std::int64_t>(queued_bytes_));
}

TapQueue::~TapQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

TapQueue::HoldId TapQueue::begin_hold() {
  std::lock_guard lock(mutex_);
  const HoldId hold = ++last_hold_;
  holds_.emplace(hold, std::chrono::steady_clock::now() + hold_limit_);
  return hold;
}

void TapQueue::end_hold(HoldId hold) {
  {
    std::lock_guard lock(mutex_);
    if (holds_.erase(hold) == 0) return;
  }
  wake_.notify_one();
}

bool TapQueue::post(Job job, std::size_t bytes, HoldId hold) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (bytes > 0 && queued_bytes_ + bytes > max_bytes_) return false;
    if (queued_bytes_ + bytes > max_bytes_ / 2 && !holds_.empty()) {
      holds_.clear();  // lists too large to hold (or too many at once): digested as they come
      wake = true;
    }
    // The thread waits on a job only when the queue was empty: otherwise it is running one, and
    // looks again when it is done, or it waits for a hold at the front, which a new job behind
    // it does not change (so a held list's pieces cost no wake-ups).
    wake = wake || jobs_.empty();
    jobs_.push_back({std::move(job), bytes, hold});
    queued_bytes_ += bytes;
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    if (bytes > 0) show_queued();
  }
  if (wake) wake_.notify_one();
  return true;
}

void TapQueue::post_control(Job job) { post(std::move(job), 0); }

std::optional<std::chrono::steady_clock::time_point> TapQueue::front_held() {
  auto it = holds_.find(jobs_.front().hold);
  if (it == holds_.end()) return std::nullopt;
  if (stopping_ || std::chrono::steady_clock::now() >= it->second) {
    holds_.erase(it);  // stopping digests everything; a hold past its limit ends
    return std::nullopt;
  }
  return it->second;
}

bool TapQueue::drain(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return drained_.wait_for(lock, limit, [this] { return idle(); });
}

namespace {

// A coroutine waiting in TapQueue::caught_up, as its marker job sees it. The queue may outlive the
// coroutine's io_context (a marker still queued when the hub stops; the queue runs what is left
// as it is destroyed), so the marker touches the executor only while the coroutine still waits:
// its frame withdraws under the same lock, when it ends or is destroyed with the io_context.
struct CaughtUpWaiter {
  std::mutex mutex;
  bool waiting = true;   // guarded by mutex
  bool reached = false;  // the coroutine's thread only
  net::Timer* timer = nullptr;
};

struct WithdrawWaiter {
  CaughtUpWaiter& waiter;
  ~WithdrawWaiter() {
    std::lock_guard lock(waiter.mutex);
    waiter.waiting = false;
  }
};

}  // namespace

boost::asio::awaitable<bool> TapQueue::caught_up(std::chrono::milliseconds limit) {
  if (idle()) co_return true;
  auto executor = co_await boost::asio::this_coro::executor;
  net::Timer timer(executor);
  auto waiter = std::make_shared<CaughtUpWaiter>();
  waiter->timer = &timer;
  const WithdrawWaiter withdraw{*waiter};
  post_control([waiter, executor] {
    std::lock_guard lock(waiter->mutex);
    if (!waiter->waiting) return;
    boost::asio::post(executor, [waiter] {
      std::lock_guard wake_lock(waiter->mutex);
      if (!waiter->waiting) return;  // it gave up at its limit since
      waiter->reached = true;
      waiter->timer->cancel();
    });
  });
  timer.expires_after(limit);
  co_await timer.async_wait(net::kNoThrow);
  co_return waiter->reached;
}

void TapQueue::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and everything queued was digested
    if (const auto until = front_held()) {
      wake_.wait_until(lock, *until);
      continue;
    }
    Job job = std::move(jobs_.front().job);
    const std::size_t bytes = jobs_.front().bytes;
    jobs_.pop_front();
    lock.unlock();
    try {
      job();
    } catch (const std::exception& e) {  // a tap never throws; an allocation may
      YH_LOG(Error) << "cache: a relayed response could not be digested: " << e.what();
    }
    // Its piece is freed before it stops counting against the bound, or, where list items point
    // into it (CacheOp::piece), held by ops that the writer's queue counts against its own.
    job = nullptr;
    lock.lock();
    queued_bytes_ -= bytes;
    if (bytes > 0) show_queued();
    // Release: what the job did happens before a worker that sees idle() feeds a tap itself.
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) drained_.notify_all();
  }
}

namespace {

// Posts `job`, which holds `bytes` of body. When the queue is full, `core` falls behind instead
// (its list is left stale, and it takes nothing more): false then.
bool post_or_fall_behind(TapQueue& queue, const std::shared_ptr<TapCore>& core, TapQueue::Job job,
                         std::size_t bytes, TapQueue::HoldId hold = 0) {
  if (queue.post(std::move(job), bytes, hold)) return true;
  queue.post_control([core] { core->fell_behind(); });
  return false;
}

constexpr std::size_t kPieceBytes = 256 * 1024;  // a list's body is digested in pieces this big

// One member or item of a list the filter framed, recorded for the queue's thread: its key and
// value are the next bytes of the piece.
struct ListRecord {
  enum class Kind : std::uint8_t { Member, ItemsBegin, Item, ItemsEnd, End };
  Kind kind;
  std::uint32_t key_bytes;    // a member's name
  std::uint32_t value_bytes;  // a member's value, an item
};

// Tells `sink` what was recorded into `piece`, in order.
void replay(base::ListSink& sink, std::string_view piece, const std::vector<ListRecord>& records) {
  std::size_t at = 0;
  for (const ListRecord& r : records) {
    const std::string_view key = piece.substr(at, r.key_bytes);
    const std::string_view value = piece.substr(at + r.key_bytes, r.value_bytes);
    at += r.key_bytes + r.value_bytes;
    switch (r.kind) {
      case ListRecord::Kind::Member:
        sink.member(key, value);
        break;
      case ListRecord::Kind::ItemsBegin:
        sink.items_begin();
        break;
      case ListRecord::Kind::Item:
        sink.item(value);
        break;
      case ListRecord::Kind::ItemsEnd:
        sink.items_end();
        break;
      case ListRecord::Kind::End:
        sink.end();
        break;
    }
  }
}

// A list's body goes to the queue in pieces: its bytes, or, when the filter frames the list, its
// members and items as framed (so the queue's thread does not frame it again).
class DeferredListTap final : public hub::ResponseTap, private base::ListSink {
 public:
  DeferredListTap(std::shared_ptr<TapCore> core, TapQueue& queue)
      : core_(std::move(core)), queue_(queue), hold_(queue.begin_hold()) {}
  ~DeferredListTap() override { queue_.end_hold(hold_); }
  DeferredListTap(const DeferredListTap&) = delete;
  DeferredListTap& operator=(const DeferredListTap&) = delete;

  void body(std::string_view bytes) override {
    if (behind_) return;
    reserve_piece();
    piece_.append(bytes);
    if (piece_.size() >= kPieceBytes) post_piece();
  }
  base::ListSink* list_sink() override { return core_->list_sink() ? this : nullptr; }
  void event(std::string_view raw) override {
    post_piece();
    queue_.post_control([core = core_, raw = std::string(raw)] { core->event(raw); });
  }
  void events_done() override {
    queue_.post_control([core = core_] { core->events_done(); });
  }
  void unframeable(std::string_view why) override {
    post_piece();
    queue_.post_control([core = core_, why = std::string(why)] { core->unframeable(why); });
    queue_.end_hold(hold_);
  }
  void end(bool complete) override {
    post_piece();
    queue_.post_control([core = core_, complete] { core->end(complete); });
    queue_.end_hold(hold_);  // the client has every byte: the list is digested now
  }
  bool failed() const override { return core_->failed(); }

 private:
  void member(std::string_view key, std::string_view raw) override {
    record(ListRecord::Kind::Member, key, raw);
  }
  void items_begin() override { record(ListRecord::Kind::ItemsBegin, {}, {}); }
  void item(std::string_view raw) override { record(ListRecord::Kind::Item, {}, raw); }
  void items_end() override { record(ListRecord::Kind::ItemsEnd, {}, {}); }
  void end() override { record(ListRecord::Kind::End, {}, {}); }

  void record(ListRecord::Kind kind, std::string_view key, std::string_view value) {
    if (behind_) return;
    reserve_piece();
    piece_.append(key).append(value);
    records_.push_back(
        {kind, static_cast<std::uint32_t>(key.size()), static_cast<std::uint32_t>(value.size())});
    if (piece_.size() >= kPieceBytes) post_piece();
  }
  bool nothing_pending() const { return piece_.empty() && records_.empty(); }
  void reserve_piece() {
    // Room for a whole piece at once: growing by doubling would copy the bytes again.
    if (nothing_pending()) piece_.reserve(kPieceBytes + kPieceBytes / 4);
  }
  void post_piece() {
    if (nothing_pending() || behind_) return;
    const std::size_t size = piece_.size() + records_.size() * sizeof(ListRecord);
    // Shared with the items the core keeps (CacheOp::piece): they are not copied again.
    auto piece = std::make_shared<const std::string>(std::move(piece_));
    TapQueue::Job job = [core = core_, piece, records = std::move(records_)] {
      core->share_piece(piece);
      if (records.empty())
        core->body(*piece);
      else
        replay(*core->list_sink(), *piece, records);
      core->share_piece(nullptr);
    };
    behind_ = !post_or_fall_behind(queue_, core_, std::move(job), size, hold_);
    piece_ = std::string();
    records_.clear();
  }

  std::shared_ptr<TapCore> core_;
  TapQueue& queue_;
  const TapQueue::HoldId hold_;      // its pieces wait for end() (TapQueue::begin_hold)
  std::string piece_;                // body bytes, or recorded members and items, not posted yet
  std::vector<ListRecord> records_;  // what piece_ holds, when the filter framed the list
  bool behind_ = false;
};

class DeferredWatchTap final : public hub::ResponseTap {
 public:
  DeferredWatchTap(std::shared_ptr<TapCore> core, TapQueue& queue)
      : core_(std::move(core)), queue_(queue), recheck_(!queue.idle()) {}

  void body(std::string_view bytes) override {
    dispatch([bytes = std::string(bytes)](TapCore& core) { core.body(bytes); });
  }
  void event(std::string_view raw) override {
    if (!batch_deferred_) batch_deferred_ = !queue_.idle();
    if (!*batch_deferred_) {
      touch(*core_);
      core_->event(raw);
    } else if (!behind_) {
      batch_.emplace_back(raw);
      batch_bytes_ += raw.size();
    }
  }
  void events_done() override {
    const bool deferred = batch_deferred_.value_or(!queue_.idle());
    batch_deferred_.reset();
    if (!deferred) {
      touch(*core_);
      core_->events_done();
      return;
    }
    if (behind_) return;
    const std::size_t bytes = batch_bytes_;
    batch_bytes_ = 0;
    auto job = [core = core_, events = std::move(batch_), recheck = take_recheck()] {
      if (recheck) core->recheck_stale();
      for (const std::string& e : events) core->event(e);
      core->events_done();
    };
    batch_.clear();
    behind_ = !post_or_fall_behind(queue_, core_, std::move(job), bytes);
  }
  void unframeable(std::string_view why) override {
    dispatch([why = std::string(why)](TapCore& core) { core.unframeable(why); });
  }
  void end(bool complete) override {
    dispatch([complete](TapCore& core) { core.end(complete); });
  }
  bool failed() const override { return core_->failed(); }

 private:
  // Runs `call` on the core now when nothing is queued before it, else on the queue's thread.
  template <class Call>
  void dispatch(Call call) {
    if (queue_.idle()) {
      touch(*core_);
      call(*core_);
      return;
    }
    queue_.post_control([core = core_, call = std::move(call), recheck = take_recheck()] {
      if (recheck) core->recheck_stale();
      call(*core);
    });
  }
  void touch(TapCore& core) {
    if (take_recheck()) core.recheck_stale();
  }
  bool take_recheck() { return std::exchange(recheck_, false); }

  std::shared_ptr<TapCore> core_;
  TapQueue& queue_;
  bool recheck_;                        // the queue was busy when the watch began
  std::optional<bool> batch_deferred_;  // decided at the first event of a batch
  std::vector<std::string> batch_;      // the events of a deferred batch
  std::size_t batch_bytes_ = 0;
  bool behind_ = false;  // the queue was full: the core fell behind and takes nothing more
};

}  // namespace

std::unique_ptr<hub::ResponseTap> deferred_list_tap(std::shared_ptr<TapCore> core,
                                                    TapQueue& queue) {
  return std::make_unique<DeferredListTap>(std::move(core), queue);
}

std::unique_ptr<hub::ResponseTap> deferred_watch_tap(std::shared_ptr<TapCore> core,
                                                     TapQueue& queue) {
  return std::make_unique<DeferredWatchTap>(std::move(core), queue);
}

}  // namespace yurthub::cache
