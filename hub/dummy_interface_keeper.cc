// Keeping the dummy interface present; see dummy_interface_keeper.h.
#include "hub/dummy_interface_keeper.h"

#include <string>

#include "base/log.h"

namespace yurthub::hub {
namespace {

// What was repaired, for the log: "re-created", "set up", "given its address back".
std::string describe(const net::DummyInterfaceRepair& r) {
  std::string out;
  auto add = [&](const char* what) { out += (out.empty() ? "" : ", ") + std::string(what); };
  if (r.created) add("re-created");
  if (r.set_up) add("set up");
  if (r.address_added) add("given its address back");
  return out;
}

}  // namespace

DummyInterfaceKeeper::DummyInterfaceKeeper(const boost::asio::any_io_executor& executor,
                                           net::DummyInterfaceSpec spec,
                                           std::chrono::milliseconds period)
    : spec_(std::move(spec)), period_(period), timer_(executor) {}

Status DummyInterfaceKeeper::start() {
  auto ensured = net::ensure_dummy_interface(spec_);
  if (!ensured) return ensured.error();
  YH_LOG(Info) << "dummy interface " << spec_.name << " with " << spec_.address
               << (ensured->created ? " created" : " in place");
  schedule();
  return {};
}

void DummyInterfaceKeeper::stop() {
  stopped_ = true;
  timer_.cancel();
}

void DummyInterfaceKeeper::remove() {
  auto deleted = net::delete_dummy_interface(spec_);
  if (!deleted) {
    YH_LOG(Error) << "could not delete dummy interface " << spec_.name << ": "
                  << deleted.error().message;
  } else if (*deleted) {
    YH_LOG(Info) << "dummy interface " << spec_.name << " deleted";
  }
}

void DummyInterfaceKeeper::schedule() {
  if (stopped_) return;
  timer_.expires_after(period_);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;  // cancelled: the keeper may be gone
    check();
    schedule();
  });
}

void DummyInterfaceKeeper::check() {
  auto ensured = net::ensure_dummy_interface(spec_);
  if (!ensured) {
    // As YurtHub: logged and tried again next period; the listeners already bound keep working
    // for the addresses still in place.
    YH_LOG(Error) << ensured.error().message << "; trying again in "
                  << std::chrono::duration_cast<std::chrono::seconds>(period_).count() << "s";
  } else if (ensured->any()) {
    YH_LOG(Warning) << "dummy interface " << spec_.name
                    << " was changed by someone else: " << describe(*ensured);
  }
}

}  // namespace yurthub::hub
