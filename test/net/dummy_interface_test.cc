// ensure_dummy_interface() / delete_dummy_interface() against the real kernel, each case in a
// fresh network namespace (test/netns.h) so the host's interfaces are never touched. What the code
// did is read back with ioctl() and getifaddrs(), not from the code under test. Kernels built
// without CONFIG_DUMMY (some VMs) run the same cases with kind "ifb", which behaves alike here.
#include "net/dummy_interface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/sockios.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include "test/netns.h"

namespace yurthub::net {
namespace {

using test::ChildChecks;
using test::interface_flags;

// "dummy" when this kernel can create it, else "ifb". Runs in the namespace child.
std::string usable_kind() {
  DummyInterfaceSpec probe;
  probe.name = "probe0";
  if (ensure_dummy_interface(probe)) {
    (void)delete_dummy_interface(probe);
    return "dummy";
  }
  return "ifb";
}

DummyInterfaceSpec spec_in_child() {
  DummyInterfaceSpec spec;  // hub-dummy0, 169.254.2.1
  spec.kind = usable_kind();
  return spec;
}

// The addresses configured on `name`, as text.
std::vector<std::string> addresses_of(const std::string& name) {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || name != i->ifa_name) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, text,
                sizeof text);
    } else {
      continue;
    }
    out.emplace_back(text);
  }
  freeifaddrs(list);
  return out;
}

// Without the IPv6 link-local address the kernel gives every link that is up.
std::size_t global_address_count(const std::string& name) {
  std::size_t n = 0;
  for (const auto& a : addresses_of(name)) n += a.rfind("fe80:", 0) != 0;
  return n;
}

bool has_address(const std::string& name, const std::string& address) {
  for (const auto& a : addresses_of(name)) {
    if (a == address) return true;
  }
  return false;
}

// Removes the interface's IPv4 address the old way: SIOCSIFADDR 0.0.0.0.
bool remove_ipv4_address(const std::string& name) {
  const int fd = test::ioctl_socket();
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  auto* sin = reinterpret_cast<sockaddr_in*>(&ifr.ifr_addr);
  sin->sin_family = AF_INET;
  const int rc = ::ioctl(fd, SIOCSIFADDR, &ifr);
  ::close(fd);
  return rc == 0;
}

// Checks the interface is there, up and has the address, as the kernel reports it.
void expect_in_place(ChildChecks& c, const DummyInterfaceSpec& spec, const std::string& when) {
  const int flags = interface_flags(spec.name);
  c.expect(flags >= 0, when + ": " + spec.name + " does not exist");
  c.expect(flags >= 0 && (flags & IFF_UP), when + ": " + spec.name + " is not up");
  c.expect(has_address(spec.name, spec.address),
           when + ": " + spec.name + " lacks " + spec.address);
}

void run(const std::function<void(ChildChecks&)>& body) {
  const auto outcome = test::run_in_new_netns(body);
  if (!outcome.skip_reason.empty()) GTEST_SKIP() << "no network namespace: " << outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
}

TEST(DummyInterface, CreatesLinkUpWithAddress) {
  run([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(interface_flags(spec.name) < 0, "hub-dummy0 exists in a fresh namespace");
    auto r = ensure_dummy_interface(spec);
    c.expect(r.ok(), "ensure: " + (r ? "" : r.error().message));
    if (!r) return;
    c.expect(r->created && !r->set_up && !r->address_added, "first ensure reports only created");
    expect_in_place(c, spec, "after create");
    c.expect(global_address_count(spec.name) == 1, "exactly one address");
  });
}

TEST(DummyInterface, SecondCallChangesNothing) {
  run([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(ensure_dummy_interface(spec).ok(), "first ensure");
    auto again = ensure_dummy_interface(spec);
    c.expect(again.ok() && !again->any(), "second ensure reports a repair");
    expect_in_place(c, spec, "after the second ensure");
    c.expect(global_address_count(spec.name) == 1, "the address is added twice");
  });
}

TEST(DummyInterface, RepairsRemovedAddressDownLinkAndDeletedLink) {
  run([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(ensure_dummy_interface(spec).ok(), "first ensure");

    c.expect(remove_ipv4_address(spec.name), "test setup: removing the address");
    c.expect(!has_address(spec.name, spec.address), "test setup: the address is still there");
    auto r = ensure_dummy_interface(spec);
    c.expect(r.ok() && r->address_added && !r->created && !r->set_up, "address repair reported");
    expect_in_place(c, spec, "after the address was removed");

    c.expect(test::set_interface_up(spec.name, false), "test setup: setting the link down");
    r = ensure_dummy_interface(spec);
    c.expect(r.ok() && r->set_up && !r->created, "set-up repair reported");
    expect_in_place(c, spec, "after the link was set down");

    auto deleted = delete_dummy_interface(spec);
    c.expect(deleted.ok() && *deleted, "delete reports a deletion");
    c.expect(interface_flags(spec.name) < 0, "the link is still there after delete");
    r = ensure_dummy_interface(spec);
    c.expect(r.ok() && r->created, "re-creation reported");
    expect_in_place(c, spec, "after the link was deleted");
  });
}

TEST(DummyInterface, KeepsOtherAddresses) {
  run([](ChildChecks& c) {
    auto spec = spec_in_child();
    c.expect(ensure_dummy_interface(spec).ok(), "first ensure");
    spec.address = "169.254.2.9";  // --dummy-if-ip changed between two runs
    c.expect(ensure_dummy_interface(spec).ok(), "ensure with a new address");
    c.expect(has_address(spec.name, "169.254.2.9"), "the new address is missing");
    c.expect(has_address(spec.name, "169.254.2.1"), "the old address was removed");
  });
}

TEST(DummyInterface, Ipv6AddressIsUsableAtOnce) {
  run([](ChildChecks& c) {
    auto spec = spec_in_child();
    spec.address = "fd00::2:1";
    auto r = ensure_dummy_interface(spec);
    c.expect(r.ok(), "ensure: " + (r ? "" : r.error().message));
    expect_in_place(c, spec, "IPv6");
    // Bindable now: without IFA_F_NODAD it would be tentative and bind() fail.
    const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    inet_pton(AF_INET6, "fd00::2:1", &sa.sin6_addr);
    c.expect(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0,
             std::string("bind [fd00::2:1]: ") + std::strerror(errno));
    ::close(fd);
  });
}

TEST(DummyInterface, RefusesSameNameOfAnotherKind) {
  run([](ChildChecks& c) {
    auto spec = spec_in_child();
    // A bridge named hub-dummy0, made without netlink.
    const int fd = test::ioctl_socket();
    char name[IFNAMSIZ] = "hub-dummy0";
    c.expect(::ioctl(fd, SIOCBRADDBR, name) == 0, std::string("SIOCBRADDBR: ") + strerror(errno));
    ::close(fd);
    auto r = ensure_dummy_interface(spec);
    c.expect(!r.ok() && r.error().code == ErrorCode::Busy, "a bridge is taken as the dummy");
    c.expect(!r.ok() && r.error().message.find("of kind bridge") != std::string::npos,
             "message: " + (r ? "" : r.error().message));
    c.expect(!has_address("hub-dummy0", spec.address), "the bridge was given the address");
    auto d = delete_dummy_interface(spec);
    c.expect(!d.ok() && interface_flags("hub-dummy0") >= 0, "the bridge was deleted");

    spec.name = "lo";  // no kind at all
    r = ensure_dummy_interface(spec);
    c.expect(!r.ok() && r.error().code == ErrorCode::Busy, "lo is taken as the dummy");
  });
}

TEST(DummyInterface, WithoutNetAdminTheMessageNamesIt) {
  run([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(test::drop_net_admin(), "test setup: capset");
    auto r = ensure_dummy_interface(spec);
    c.expect(!r.ok() && r.error().code == ErrorCode::PermissionDenied, "not PermissionDenied");
    const std::string want = "creating dummy interface hub-dummy0 needs CAP_NET_ADMIN: ";
    c.expect(!r.ok() && r.error().message.rfind(want, 0) == 0,
             "message: " + (r ? "" : r.error().message));
    c.expect(interface_flags(spec.name) < 0, "created without CAP_NET_ADMIN");
  });
}

TEST(DummyInterface, DeleteOfMissingLinkIsNotAnError) {
  run([](ChildChecks& c) {
    auto r = delete_dummy_interface(DummyInterfaceSpec{});
    c.expect(r.ok() && !*r, "deleting a missing link");
  });
}

TEST(DummyInterface, BadNameOrAddressIsInvalidArgument) {
  // No namespace needed: refused before any netlink request.
  for (const char* name : {"", "a-name-of-16-byt", "a/b", "a:b", "a b"}) {
    DummyInterfaceSpec spec;
    spec.name = name;
    auto r = ensure_dummy_interface(spec);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument) << name;
  }
  DummyInterfaceSpec spec;
  spec.address = "169.254.2";
  auto r = ensure_dummy_interface(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace yurthub::net
