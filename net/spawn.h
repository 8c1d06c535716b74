// spawn_detached(): starts a coroutine nothing waits for (an accept loop, a session, a client
// watcher, the journal's replay). asio::detached drops an exception that escapes such a coroutine
// without a word; an escaped exception is a bug in the hub, so this logs it with the task's name
// and counts it (node_yurthub_coroutine_exceptions_total on the admin port) instead. The
// coroutine's own errors are values (Result, error_code), never exceptions.
#pragma once

#include <cstdint>
#include <exception>
#include <utility>

#include <boost/asio/co_spawn.hpp>

namespace yurthub::net {

// How many spawned coroutines ended with an exception in this process.
std::uint64_t escaped_exceptions();

namespace spawn_detail {
// Logs and counts `error` (non-null) for the task `name`.
void report(const char* name, const std::exception_ptr& error);
}  // namespace spawn_detail

// `name` must outlive the coroutine (a string literal).
template <class ExecutionContextOrExecutor, class Awaitable>
void spawn_detached(ExecutionContextOrExecutor&& where, Awaitable&& task, const char* name) {
  boost::asio::co_spawn(std::forward<ExecutionContextOrExecutor>(where),
                        std::forward<Awaitable>(task), [name](const std::exception_ptr& error) {
                          if (error) spawn_detail::report(name, error);
                        });
}

}  // namespace yurthub::net
