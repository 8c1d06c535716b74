// Replays the offline write journal; see journal_replay.h. One coroutine on worker 0.
#include "cache/journal_replay.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <rapidjson/document.h>

#include "cache/merge_patch_diff.h"
#include "cache/writer_task.h"
#include "hub/http_io.h"
#include "hub/json_parse.h"
#include "hub/local_client.h"
#include "hub/log.h"

namespace yurthub::cache {
namespace {

namespace net = boost::asio;

std::string describe(const JournalEntry& e) {
  return "journal entry " + std::to_string(e.seq) + " (" + e.method + " " + e.target + " by " +
         e.component + ")";
}

// The client's change from `base` to `updated`, without the fields only the apiserver sets, as
// a merge patch; nullopt when either cannot be read. Only what the target can change: `status`
// for a /status update, everything else otherwise (the apiserver would ignore the rest).
std::optional<std::string> client_change(const std::string& base, const std::string& updated,
                                         std::string_view target) {
  const bool status_write = target.substr(0, target.find('?')).ends_with("/status");
  rapidjson::Document b, u;
  if (!hub::parse_json(base, b) || !hub::parse_json(updated, u) || !b.IsObject() || !u.IsObject()) {
    return std::nullopt;
  }
  rapidjson::Document diff = create_merge_patch(b, u);
  if (diff.IsObject()) {
    for (auto it = diff.MemberBegin(); it != diff.MemberEnd();) {
      const bool is_status = std::string_view(it->name.GetString()) == "status";
      it = is_status != status_write ? diff.EraseMember(it) : it + 1;
    }
  }
  if (diff.IsObject() && diff.HasMember("metadata") && diff["metadata"].IsObject()) {
    auto& metadata = diff["metadata"];
    for (const char* managed : {"resourceVersion", "generation", "managedFields", "uid",
                                "creationTimestamp"}) {
      metadata.RemoveMember(managed);
    }
    if (metadata.MemberCount() == 0) diff.RemoveMember("metadata");
  }
  if (diff.IsObject() && diff.MemberCount() == 0) return std::string();
  return hub::to_json(diff);
}

}  // namespace

JournalReplay::JournalReplay(Store& store, CacheWriter& writer, Journal& journal, Options options)
    : store_(store), writer_(writer), journal_(journal), options_(options) {}

void JournalReplay::start(hub::ReplayContext context) {
  if (running_.exchange(true)) return;
  context_ = std::move(context);
  net::co_spawn(context_.executor, run(), net::detached);
}

void JournalReplay::stop() {
  if (stopping_.exchange(true) || !running_) return;
  net::post(context_.executor, [this] {
    if (timer_ != nullptr) timer_->cancel();
  });
}

net::awaitable<void> JournalReplay::sleep(std::chrono::milliseconds how_long) {
  timer_->expires_after(how_long);
  co_await timer_->async_wait(hub::kNoThrow);
}

net::awaitable<void> JournalReplay::run() {
  // The timer lives in this coroutine's frame, so it goes with the executor's io_context even if
  // the loop never gets to finish.
  net::steady_timer timer(context_.executor);
  timer_ = &timer;
  struct Forget {
    net::steady_timer*& timer;
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

net::awaitable<bool> JournalReplay::pass() {
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
      YH_LOG(Warning) << "journal: dropped " << describe(*entry) << ": " << attempt.detail;
    }
    conflicts_.erase(seq);
    co_await remove(seq, replayed ? "replayed" : drop_reason_label(attempt.reason));
  }
  co_return waiting.empty();
}

net::awaitable<Result<hub::LocalResponse>> JournalReplay::send(const JournalEntry& entry,
                                                              std::string method,
                                                              std::string content_type,
                                                              std::string body) {
  hub::LocalRequest request{std::move(method), entry.target,
                            {{"Content-Type", std::move(content_type)},
                             {"User-Agent", entry.user_agent},
                             {"Authorization", entry.authorization},
                             {"Accept", "application/json"},
                             {std::string(hub::kReplayHeader), std::to_string(entry.seq)}},
                            std::move(body)};
  auto response = co_await hub::local_request(context_.executor, context_.proxy_host,
                                              context_.proxy_port, std::move(request),
                                              options_.request_timeout);
  if (!response) journal_.count_retry("network");
  co_return response;
}

net::awaitable<JournalReplay::Attempt> JournalReplay::replay(const JournalEntry& entry) {
  auto response = co_await send(entry, entry.method, entry.content_type, entry.body);
  if (!response) co_return Attempt{Outcome::Retry, response.error().message};
  if (response->status == 409 && entry.method == "PUT") co_return co_await merge_stale_update(entry);
  co_return judge(entry, response->status, response->body);
}

net::awaitable<JournalReplay::Attempt> JournalReplay::merge_stale_update(const JournalEntry& entry) {
  auto change = client_change(entry.base, entry.body, entry.target);
  if (!change) co_return Attempt{Outcome::Dropped, "409 and the update cannot be merged"};
  if (change->empty()) co_return Attempt{Outcome::Replayed, "409, and the update changed nothing"};
  auto response = co_await send(entry, "PATCH", "application/merge-patch+json", std::move(*change));
  if (!response) co_return Attempt{Outcome::Retry, response.error().message};
  Attempt attempt = judge(entry, response->status, response->body);
  if (attempt.outcome == Outcome::Replayed) {
    journal_.count_conflict_merged();
    attempt.detail = "stale update merged onto the cloud's object: " + attempt.detail;
  }
  co_return attempt;
}

JournalReplay::Attempt JournalReplay::judge(const JournalEntry& entry, unsigned status,
                                            const std::string& body) {
  const std::string detail = std::to_string(status) + (status / 100 == 2 ? "" : " " + body.substr(0, 300));
  if (status / 100 == 2) return {Outcome::Replayed, detail};
  if (status == 409 && entry.method == "POST") return {Outcome::Replayed, "409: already exists"};
  if (status >= 500 || status == 429) {
    journal_.count_retry(status == 429 ? "429" : "5xx");
    return {Outcome::Retry, detail};
  }
  if (status == 409) {
    if (++conflicts_[entry.seq] < options_.max_conflict_attempts) {
      journal_.count_retry("409");
      return {Outcome::Retry, detail};
    }
    return {Outcome::Dropped, detail, DropReason::Conflict};
  }
  return {Outcome::Dropped, detail};  // 404, 422 and other 4xx: the cloud will never take it
}

net::awaitable<void> JournalReplay::remove(std::uint64_t seq, const char* outcome) {
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
