// Creating, repairing and deleting the hub's dummy interface with rtnetlink; see
// dummy_interface.h.
#include "net/dummy_interface.h"

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "net/rtnetlink.h"

namespace yurthub::net {
namespace {

struct Address {
  int family = AF_INET;
  unsigned char bytes[16] = {};
  std::size_t size = 4;
  unsigned char prefix = 32;
};

// What an errno from the kernel means for the operator, for `action` ("creating dummy interface
// hub-dummy0").
Error kernel_error(const std::string& action, int err) {
  if (err == EPERM || err == EACCES) {
    return make_error(ErrorCode::PermissionDenied,
                      action + " needs CAP_NET_ADMIN: " + std::strerror(err));
  }
  return make_error(action + ": " + std::strerror(err));
}

Error local_error(const std::string& action, const Error& e) {
  return make_error(e.code, action + ": " + e.message);
}

// The attributes after a message's fixed part of `fixed` bytes, or nullopt if it is too short.
std::optional<std::pair<const rtattr*, int>> attributes(const nlmsghdr& m, std::size_t fixed) {
  if (m.nlmsg_len < NLMSG_LENGTH(fixed)) return std::nullopt;
  const char* start = static_cast<const char*>(NLMSG_DATA(&m)) + NLMSG_ALIGN(fixed);
  const int len = static_cast<int>(m.nlmsg_len) - static_cast<int>(NLMSG_SPACE(fixed));
  return std::make_pair(reinterpret_cast<const rtattr*>(start), len < 0 ? 0 : len);
}

std::string attr_string(const rtattr* a) {
  const char* s = static_cast<const char*>(RTA_DATA(a));
  return std::string(s, strnlen(s, RTA_PAYLOAD(a)));
}

// IFLA_INFO_KIND inside IFLA_LINKINFO.
std::string link_kind(const rtattr* linkinfo) {
  int len = static_cast<int>(RTA_PAYLOAD(linkinfo));
  for (auto* a = static_cast<const rtattr*>(RTA_DATA(linkinfo)); RTA_OK(a, len);
       a = RTA_NEXT(a, len)) {
    if (a->rta_type == IFLA_INFO_KIND) return attr_string(a);
  }
  return "";
}

// The link named `name`, nullopt if there is none.
Result<std::optional<LinkState>> get_link(RtNetlink& nl, const std::string& name,
                                          const std::string& action) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  NetlinkRequest req(RTM_GETLINK, 0, &ifi, sizeof ifi);
  req.add_string(IFLA_IFNAME, name);
  std::optional<LinkState> found;
  auto answer =
      nl.transact(req, [&](const nlmsghdr& m) { return read_link_message(m, name, found); });
  if (!answer) return local_error(action, answer.error());
  if (*answer == ENODEV) return std::optional<LinkState>();
  if (*answer != 0) return kernel_error(action, *answer);
  if (!found) return make_error(action + ": the kernel's answer has no link named " + name);
  return found;
}

Result<int> create_link(RtNetlink& nl, const DummyInterfaceSpec& spec) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_flags = IFF_UP;  // created up: no window where it exists down
  ifi.ifi_change = IFF_UP;
  NetlinkRequest req(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof ifi);
  req.add_string(IFLA_IFNAME, spec.name);
  const std::size_t linkinfo = req.begin_nested(IFLA_LINKINFO);
  req.add_string(IFLA_INFO_KIND, spec.kind);
  req.end_nested(linkinfo);
  return nl.transact(req, [](const nlmsghdr&) { return true; });
}

Status set_up(RtNetlink& nl, const LinkState& link, const std::string& action) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = link.index;
  ifi.ifi_flags = IFF_UP;
  ifi.ifi_change = IFF_UP;
  NetlinkRequest req(RTM_NEWLINK, 0, &ifi, sizeof ifi);
  auto answer = nl.transact(req, [](const nlmsghdr&) { return true; });
  if (!answer) return local_error(action, answer.error());
  if (*answer != 0) return kernel_error(action, *answer);
  return {};
}

Result<bool> has_address(RtNetlink& nl, const LinkState& link, const Address& want,
                         const std::string& action) {
  ifaddrmsg ifa{};
  ifa.ifa_family = static_cast<unsigned char>(want.family);
  ifa.ifa_index = static_cast<unsigned>(link.index);
  NetlinkRequest req(RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof ifa);
  bool found = false;
  const std::string_view bytes(reinterpret_cast<const char*>(want.bytes), want.size);
  auto answer = nl.transact(req, [&](const nlmsghdr& m) {
    return read_address_message(m, link.index, want.family, bytes, found);
  });
  if (!answer) return local_error(action, answer.error());
  if (*answer != 0) return kernel_error(action, *answer);
  return found;
}

Status add_address(RtNetlink& nl, const LinkState& link, const Address& address,
                   const std::string& action) {
  ifaddrmsg ifa{};
  ifa.ifa_family = static_cast<unsigned char>(address.family);
  ifa.ifa_prefixlen = address.prefix;
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<unsigned>(link.index);
  // IPv6: usable at once; duplicate address detection would keep it "tentative" and bind() fail.
  if (address.family == AF_INET6) ifa.ifa_flags = IFA_F_NODAD;
  // REPLACE, as YurtHub's AddrReplace: an equal address with other properties is updated.
  NetlinkRequest req(RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, &ifa, sizeof ifa);
  req.add_attr(IFA_LOCAL, address.bytes, address.size);
  req.add_attr(IFA_ADDRESS, address.bytes, address.size);
  auto answer = nl.transact(req, [](const nlmsghdr&) { return true; });
  if (!answer) return local_error(action, answer.error());
  if (*answer != 0 && *answer != EEXIST) return kernel_error(action, *answer);
  return {};
}

Result<Address> parse_address(const std::string& text) {
  Address a;
  if (inet_pton(AF_INET, text.c_str(), a.bytes) == 1) return a;
  if (inet_pton(AF_INET6, text.c_str(), a.bytes) == 1) {
    a.family = AF_INET6;
    a.size = 16;
    a.prefix = 128;
    return a;
  }
  return make_error(ErrorCode::InvalidArgument, "\"" + text + "\" is not an IP address");
}

Status check_spec(const DummyInterfaceSpec& spec, const std::string& what) {
  if (auto why = invalid_interface_name_reason(spec.name); !why.empty()) {
    return make_error(ErrorCode::InvalidArgument, what + ": " + why);
  }
  return {};
}

Error other_kind(const std::string& name, const std::string& want, const std::string& kind) {
  return make_error(ErrorCode::Busy, "interface " + name + " exists but is " +
                                         (kind.empty() ? "not a virtual link" : "of kind " + kind) +
                                         ", not " + want +
                                         "; not touching it: delete it or choose --dummy-if-name");
}

}  // namespace

bool read_link_message(const nlmsghdr& m, const std::string& name,
                       std::optional<LinkState>& found) {
  if (m.nlmsg_type != RTM_NEWLINK) return true;
  auto attrs = attributes(m, sizeof(ifinfomsg));
  if (!attrs) return false;
  const auto* info = static_cast<const ifinfomsg*>(NLMSG_DATA(&m));
  LinkState link{info->ifi_index, info->ifi_flags, ""};
  std::string link_name;
  auto [a, len] = *attrs;
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == IFLA_IFNAME) link_name = attr_string(a);
    if (a->rta_type == IFLA_LINKINFO) link.kind = link_kind(a);
  }
  if (link_name == name) found = link;
  return true;
}

bool read_address_message(const nlmsghdr& m, int index, int family, std::string_view address,
                          bool& found) {
  if (m.nlmsg_type != RTM_NEWADDR) return true;
  auto attrs = attributes(m, sizeof(ifaddrmsg));
  if (!attrs) return false;
  const auto* info = static_cast<const ifaddrmsg*>(NLMSG_DATA(&m));
  // The dump covers every link unless the kernel filters strictly: select ours here.
  if (info->ifa_index != static_cast<unsigned>(index) || info->ifa_family != family) return true;
  auto [a, len] = *attrs;
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    // IFA_LOCAL is the interface's own IPv4 address; IPv6 has only IFA_ADDRESS.
    const bool own = a->rta_type == IFA_LOCAL || (family == AF_INET6 && a->rta_type == IFA_ADDRESS);
    if (own && RTA_PAYLOAD(a) == address.size() &&
        std::memcmp(RTA_DATA(a), address.data(), address.size()) == 0) {
      found = true;
    }
  }
  return true;
}

std::string invalid_interface_name_reason(const std::string& name) {
  if (name.empty()) return "an interface name cannot be empty";
  if (name.size() >= IFNAMSIZ) {
    return "interface name \"" + name + "\" is longer than " + std::to_string(IFNAMSIZ - 1) +
           " bytes";
  }
  if (name == "." || name == "..") return "\"" + name + "\" is not an interface name";
  for (char c : name) {
    if (c == '/' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f' || c == '\0') {
      return "interface name \"" + name + "\" contains '/', ':' or white space";
    }
  }
  return "";
}

Result<DummyInterfaceRepair> ensure_dummy_interface(const DummyInterfaceSpec& spec) {
  const std::string what = "dummy interface " + spec.name;
  if (Status ok = check_spec(spec, what); !ok) return ok.error();
  auto address = parse_address(spec.address);
  if (!address) return local_error(what, address.error());
  auto nl = RtNetlink::open(spec.timeout);
  if (!nl) return local_error(what, nl.error());

  DummyInterfaceRepair repair;
  auto link = get_link(*nl, spec.name, "reading " + what);
  if (!link) return link.error();
  if (!*link) {
    auto created = create_link(*nl, spec);
    const std::string action = "creating " + what;
    if (!created) return local_error(action, created.error());
    if (*created == EOPNOTSUPP) {
      return make_error(action + ": the kernel cannot create links of kind " + spec.kind +
                        " (CONFIG_DUMMY, module dummy): " + std::strerror(*created));
    }
    // EEXIST: created by someone else since we looked; checked like any existing link below.
    if (*created != 0 && *created != EEXIST) return kernel_error(action, *created);
    repair.created = *created == 0;
    link = get_link(*nl, spec.name, "reading " + what);
    if (!link) return link.error();
    if (!*link) return make_error(action + ": it is gone right after being created");
  }
  if ((*link)->kind != spec.kind) return other_kind(spec.name, spec.kind, (*link)->kind);
  if (!((*link)->flags & IFF_UP)) {
    if (Status up = set_up(*nl, **link, "setting " + what + " up"); !up) return up.error();
    repair.set_up = true;
  }
  const std::string cidr = spec.address + "/" + std::to_string(address->prefix);
  auto present = has_address(*nl, **link, *address, "reading the addresses of " + what);
  if (!present) return present.error();
  if (!*present) {
    if (Status added = add_address(*nl, **link, *address, "adding " + cidr + " to " + what);
        !added) {
      return added.error();
    }
    repair.address_added = !repair.created;
  }
  return repair;
}

Result<bool> delete_dummy_interface(const DummyInterfaceSpec& spec) {
  const std::string what = "dummy interface " + spec.name;
  if (Status ok = check_spec(spec, what); !ok) return ok.error();
  auto nl = RtNetlink::open(spec.timeout);
  if (!nl) return local_error(what, nl.error());
  auto link = get_link(*nl, spec.name, "reading " + what);
  if (!link) return link.error();
  if (!*link) return false;
  if ((*link)->kind != spec.kind) return other_kind(spec.name, spec.kind, (*link)->kind);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = (*link)->index;
  NetlinkRequest req(RTM_DELLINK, 0, &ifi, sizeof ifi);
  auto answer = nl->transact(req, [](const nlmsghdr&) { return true; });
  const std::string action = "deleting " + what;
  if (!answer) return local_error(action, answer.error());
  if (*answer == ENODEV) return false;
  if (*answer != 0) return kernel_error(action, *answer);
  return true;
}

}  // namespace yurthub::net
