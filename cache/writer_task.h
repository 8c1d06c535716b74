// co_await-able CacheWriter::run_exclusive: a coroutine on a worker thread hands a transaction to
// the writer thread and resumes on its own executor once the commit is durable (or failed).
// Used by OfflineWrites and JournalReplay.
#pragma once

#include <memory>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/cache_writer.h"

namespace yurthub::cache {

inline boost::asio::awaitable<Status> run_in_writer(CacheWriter& writer, CacheWriter::Task task) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void(Status)>(
      // NOLINTNEXTLINE(performance-unnecessary-value-param): moved into run_exclusive below.
      [&writer](auto handler, CacheWriter::Task task) {
        using Handler = decltype(handler);
        // std::function needs a copyable callable; the coroutine's handler is move-only.
        auto shared = std::make_shared<Handler>(std::move(handler));
        auto work = std::make_shared<decltype(boost::asio::make_work_guard(*shared))>(
            boost::asio::make_work_guard(*shared));
        writer.run_exclusive(std::move(task), [shared, work](Status status) {
          auto executor = boost::asio::get_associated_executor(*shared);
          boost::asio::post(executor, [shared, work, status = std::move(status)]() mutable {
            std::move (*shared)(std::move(status));
            work->reset();
          });
        });
      },
      boost::asio::use_awaitable, std::move(task));
}

}  // namespace yurthub::cache
