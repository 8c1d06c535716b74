// Replays the offline write journal; see journal_replay.h. One coroutine on worker 0.
#include "cache/journal_replay.h"

#include <rapidjson/document.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include "base/json_parse.h"
#include "base/log.h"
#include "cache/replay_rebase.h"
#include "cache/writer_task.h"
#include "net/http_io.h"
#include "net/local_client.h"
#include "net/spawn.h"

namespace yurthub::cache {
namespace {

namespace asio = boost::asio;

std::string describe(const JournalEntry& e) {
  return "journal entry " + std::to_string(e.seq) + " (" + e.method + " " + e.target + " by " +
         e.component + ")";
}

}  // namespace

JournalReplay::JournalReplay(Store& store, CacheWriter& writer, Journal& journal, Options options)
    : store_(store), writer_(writer), journal_(journal), options_(options) {}

void JournalReplay::start(hub::ReplayContext context) {
  if (running_.exchange(true)) return;
  context_ = std::move(context);
  net::spawn_detached(context_.executor, run(), "journal replay");
}

void JournalReplay::stop() {
  if (stopping_.exchange(true) || !running_) return;
  asio::post(context_.executor, [this] {
    if (timer_ != nullptr) timer_->cancel();
  });
}

asio::awaitable<void> JournalReplay::sleep(std::chrono::milliseconds how_long) {
  timer_->expires_after(how_long);
  co_await timer_->async_wait(net::kNoThrow);
}

asio::awaitable<void> JournalReplay::run() {
  // The timer lives in this coroutine's frame, so it goes with the executor's io_context even if
  // the loop never gets to finish.
  net::Timer timer(context_.executor);
  timer_ = &timer;
  struct Forget {
    net::Timer*& timer;
    ~Forget() { timer = nullptr; }
  } forget{timer_};
  auto backoff = options_.backoff_initial;
  while (!stopping_) {
    if (journal_.empty() || !context_.online()) {
      co_await sleep(options_.idle_poll);
      continue;
    }
    if (co_await pass()) {
      backoff = options_.backoff_initial;
      continue;
    }
    co_await sleep(backoff);
    backoff = std::min(backoff * 2, options_.backoff_max);
  }
}

asio::awaitable<bool> JournalReplay::pass() {
  std::vector<std::pair<std::uint64_t, std::optional<JournalEntry>>> entries;
  store_.read()->scan_journal([&](std::uint64_t seq, std::string_view bytes) {
    entries.emplace_back(seq, decode_journal_entry(seq, bytes));
    return true;
  });
  std::set<std::string> waiting;  // objects with an entry to retry: their later entries wait
  for (auto& [seq, entry] : entries) {
    if (stopping_ || !context_.online()) co_return false;
    if (!entry) {
      co_await remove(seq, drop_reason_label(DropReason::Undecodable));
      continue;
    }
    if (waiting.contains(entry->object)) continue;
    Attempt attempt = co_await replay(*entry);
    if (attempt.outcome == Outcome::Retry) {
      YH_LOG(Info) << "journal: " << describe(*entry) << " will be retried: " << attempt.detail;
      waiting.insert(entry->object);
      continue;
    }
    const bool replayed = attempt.outcome == Outcome::Replayed;
    if (replayed) {
      YH_LOG(Info) << "journal: replayed " << describe(*entry) << ": " << attempt.detail;
    } else {
      // A write its client was told had succeeded will never reach the cloud: an alert, not a
      // notice (node_yurthub_journal_removed_total counts it by reason).
      YH_LOG(Error) << "journal: DROPPED " << describe(*entry) << " ("
                    << drop_reason_label(attempt.reason) << "): " << attempt.detail;
    }
    conflicts_.erase(seq);
    co_await remove(seq, replayed ? "replayed" : drop_reason_label(attempt.reason));
  }
  co_return waiting.empty();
}

asio::awaitable<Result<net::LocalResponse>> JournalReplay::send(const JournalEntry& entry,
                                                                std::string method,
                                                                std::string content_type,
                                                                std::string body) {
  net::LocalRequest request{std::move(method),
                            entry.target,
                            {{"Content-Type", std::move(content_type)},
                             {"User-Agent", entry.user_agent},
                             {"Authorization", entry.authorization},
                             {"Accept", "application/json"},
                             {std::string(hub::kReplayHeader), context_.replay_token}},
                            std::move(body)};
  auto response =
      co_await net::local_request(context_.executor, context_.proxy_host, context_.proxy_port,
                                  std::move(request), options_.request_timeout);
  if (!response) journal_.count_retry("network");
  co_return response;
}

asio::awaitable<JournalReplay::Attempt> JournalReplay::replay(const JournalEntry& entry) {
  auto response = co_await send(entry, entry.method, entry.content_type, entry.body);
  if (!response) co_return Attempt{Outcome::Retry, response.error().message};
  if (response->status == 409 && entry.method == "PUT")
    co_return co_await merge_stale_update(entry);
  co_return judge(entry, response->status, response->body);
}

asio::awaitable<JournalReplay::Attempt> JournalReplay::merge_stale_update(
    const JournalEntry& entry) {
  // As a client would: read the cloud's object again and make the change on it (replay_rebase.h).
  auto current = co_await send(entry, "GET", "", "");
  if (!current) co_return Attempt{Outcome::Retry, current.error().message};
  if (current->status != 200) co_return judge(entry, current->status, current->body);
  const bool status_write =
      std::string_view(entry.target).substr(0, entry.target.find('?')).ends_with("/status");
  Rebase rebased = rebase_update(entry.base, entry.body, current->body, status_write);
  switch (rebased.kind) {
    case Rebase::Kind::Nothing:
      co_return Attempt{Outcome::Replayed, "409, and the cloud's object already has the change"};
    case Rebase::Kind::Conflict:
      co_return Attempt{Outcome::Dropped, "409 and " + rebased.detail, DropReason::Conflict};
    case Rebase::Kind::Unreadable:
      co_return Attempt{Outcome::Dropped, "409 and " + rebased.detail};
    case Rebase::Kind::Put:
      break;
  }
  auto response = co_await send(entry, "PUT", "application/json", std::move(rebased.body));
  if (!response) co_return Attempt{Outcome::Retry, response.error().message};
  Attempt attempt = judge(entry, response->status, response->body);
  if (attempt.outcome == Outcome::Replayed) {
    journal_.count_conflict_merged();
    attempt.detail = "stale update re-based onto the cloud's object: " + attempt.detail;
  }
  co_return attempt;
}

JournalReplay::Attempt JournalReplay::judge(const JournalEntry& entry, unsigned status,
                                            const std::string& body) {
  const std::string detail =
      std::to_string(status) + (status / 100 == 2 ? "" : " " + body.substr(0, 300));
  if (status / 100 == 2) return {Outcome::Replayed, detail};
  if (status == 409 && entry.method == "POST") return {Outcome::Replayed, "409: already exists"};
  if (status >= 500 || status == 429) {
    journal_.count_retry(status == 429 ? "429" : "5xx");
    return {Outcome::Retry, detail};
  }
  if (status == 409 || status == 401) {
    // 409: another writer got there first, read again next pass. 401: the credentials may be
    // renewed (the hub's certificate, a pod's token): a while, then it is given up.
    if (++conflicts_[entry.seq] < options_.max_conflict_attempts) {
      journal_.count_retry(std::to_string(status));
      return {Outcome::Retry, detail};
    }
    return {Outcome::Dropped, detail,
            status == 409 ? DropReason::Conflict : DropReason::Unauthorized};
  }
  if (status == 403) return {Outcome::Dropped, detail, DropReason::Forbidden};
  return {Outcome::Dropped, detail};  // 404, 422 and other 4xx: the cloud will never take it
}

asio::awaitable<void> JournalReplay::remove(std::uint64_t seq, const char* outcome) {
  CacheWriter::Task task = [seq](WriteTxn& txn) { return txn.delete_journal(seq); };
  Status removed = co_await run_in_writer(writer_, std::move(task));
  if (!removed) {
    YH_LOG(Error) << "journal: cannot delete entry " << seq << ": " << removed.error().message
                  << "; it will be sent again";
    co_return;
  }
  journal_.commit_remove(seq, outcome);
}

}  // namespace yurthub::cache
