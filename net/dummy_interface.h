// The dummy network interface through which in-cluster pods reach the hub (169.254.2.1 on
// hub-dummy0), created and kept as YurtHub's pkg/yurthub/network does: a link of kind "dummy",
// the address as /32 (/128 for IPv6), checked again periodically and re-created or repaired when
// something removed it. Spoken to the kernel with rtnetlink (net/rtnetlink.h), no shell-outs.
// Called by hub/dummy_interface_keeper.cc at start, every minute and at shutdown. Blocking (a
// few netlink round trips, each bounded by the spec's timeout); each call uses its own socket, so
// calls are independent but the interface itself is shared state of the whole node.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

struct nlmsghdr;  // <linux/netlink.h>

namespace yurthub::net {

struct DummyInterfaceSpec {
  std::string name = "hub-dummy0";      // 1..15 bytes (IFNAMSIZ - 1), no '/', ':' or spaces
  std::string address = "169.254.2.1";  // IPv4 (added as /32) or IPv6 (/128, without DAD)
  // The link kind created and required: "dummy" in the hub. Tests on kernels built without
  // CONFIG_DUMMY use another kind that behaves alike for this purpose (ifb).
  std::string kind = "dummy";
  std::chrono::milliseconds timeout{2000};  // bound on each answer of the kernel
};

// What ensure_dummy_interface() had to do; all false when everything was already in place.
struct DummyInterfaceRepair {
  bool created = false;        // the link did not exist
  bool set_up = false;         // the link existed but was down
  bool address_added = false;  // the link existed without the address
  bool any() const { return created || set_up || address_added; }
};

// Makes sure a link named spec.name of kind spec.kind exists, is up and has spec.address, creating
// or repairing what is missing; other addresses on it are left alone (as YurtHub). Errors:
// a link of that name but another kind is ErrorCode::Busy and is never reused or changed; a
// missing CAP_NET_ADMIN is ErrorCode::PermissionDenied with a message naming it; a bad name or
// address is ErrorCode::InvalidArgument. Every message names the interface.
Result<DummyInterfaceRepair> ensure_dummy_interface(const DummyInterfaceSpec& spec);

// Deletes the link named spec.name if it is of kind spec.kind (YurtHub deletes its interface when
// it stops). The value says whether a link was deleted; none existing is not an error. A link of
// another kind is left in place: ErrorCode::Busy.
Result<bool> delete_dummy_interface(const DummyInterfaceSpec& spec);

// Why `name` cannot be an interface name (the kernel's dev_valid_name), or "" if it can.
std::string invalid_interface_name_reason(const std::string& name);

// Readers of the kernel's answers, one message at a time, as the functions above use them with
// RtNetlink::transact (net/rtnetlink.h, whose handle_netlink_datagram has checked each message's
// length against its datagram). Declared here for test/fuzz/rtnetlink_fuzz.cc.

// A link as RTM_GETLINK's answer describes it.
struct LinkState {
  int index = 0;
  unsigned flags = 0;
  std::string kind;  // IFLA_INFO_KIND; "" for links without one (loopback, physical NICs)
};

// One message of the answer to RTM_GETLINK for `name`: sets `found` when it is the RTM_NEWLINK of
// the link named `name`. False when the message is malformed.
bool read_link_message(const nlmsghdr& m, const std::string& name, std::optional<LinkState>& found);

// One message of RTM_GETADDR's dump: sets `found` when it is an RTM_NEWADDR of link `index` and
// `family` (AF_INET, AF_INET6) whose own address is `address` (its 4 or 16 bytes). False when the
// message is malformed.
bool read_address_message(const nlmsghdr& m, int index, int family, std::string_view address,
                          bool& found);

}  // namespace yurthub::net
