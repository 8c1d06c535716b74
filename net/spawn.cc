// The report side of spawn_detached(); see spawn.h.
#include "net/spawn.h"

#include <atomic>
#include <stdexcept>

#include "base/log.h"

namespace yurthub::net {
namespace {
std::atomic<std::uint64_t> g_escaped{0};
}  // namespace

std::uint64_t escaped_exceptions() { return g_escaped.load(std::memory_order_relaxed); }

namespace spawn_detail {
void report(const char* name, const std::exception_ptr& error) {
  g_escaped.fetch_add(1, std::memory_order_relaxed);
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    YH_LOG(Error) << name << " ended by an exception (a bug): " << e.what();
  } catch (...) {
    YH_LOG(Error) << name << " ended by an exception (a bug) of unknown type";
  }
}
}  // namespace spawn_detail

}  // namespace yurthub::net
