// Fuzz target for the readers of the kernel's netlink answers: net/rtnetlink.h
// handle_netlink_datagram (every answer RtNetlink::transact receives), net/dummy_interface.h
// read_link_message and read_address_message (the hub creating and checking hub-dummy0),
// net/peer_credentials.h read_sock_diag_message (who a local peer of the admin port is), and
// net/node_address.h's route and address readers (the default --node-ip). The
// kernel is no attacker, but these read raw structs and attributes by the lengths in them, where
// one unchecked length is a read past the datagram. The input is one datagram answering request 1,
// copied into its own buffer as recvmsg fills one; each reader goes over it. Oracles: every message
// handed on is of request 1 and lies inside the datagram; an answer that ends the request is 0 or
// an errno; a link or address found is one the datagram names.
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <vector>

#include "net/dummy_interface.h"
#include "net/node_address.h"
#include "net/peer_credentials.h"
#include "net/rtnetlink.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

constexpr std::uint32_t kSeq = 1;
// What the seeds answer (seed_corpus.sh): link 2, hub-dummy0, 169.254.2.1 or fd00::1, and a
// loopback connection from port 45678 to the admin port 10267.
constexpr int kLinkIndex = 2;
constexpr char kLinkName[] = "hub-dummy0";
constexpr unsigned char kV4[4] = {169, 254, 2, 1};
constexpr unsigned char kV6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

std::string_view bytes_of(const unsigned char* p, std::size_t n) {
  return {reinterpret_cast<const char*>(p), n};
}

// Runs handle_netlink_datagram over `datagram` with `read` as transact's on_message, checking
// what it hands on and what it answers.
template <class Read>
void read_datagram(const std::vector<char>& datagram, Read read) {
  const char* begin = datagram.data();
  const char* end = begin + datagram.size();
  auto answer = net::handle_netlink_datagram(begin, datagram.size(), kSeq, [&](const nlmsghdr& m) {
    const char* at = reinterpret_cast<const char*>(&m);
    fuzz::check(at >= begin && at + sizeof(nlmsghdr) <= end, "a message header outside");
    fuzz::check(m.nlmsg_len >= sizeof(nlmsghdr) && m.nlmsg_len <= std::size_t(end - at),
                "a message longer than what is left of its datagram");
    fuzz::check(m.nlmsg_seq == kSeq, "a message of another request handed on");
    return read(m);
  });
  if (answer && *answer) fuzz::check(**answer >= 0, "an answer that is no errno");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > net::RtNetlink::kMaxDatagram) return 0;  // recvmsg never gives more (MSG_TRUNC)
  // A buffer of its own (aligned as recvmsg's is) and of the exact size, so ASan sees any read
  // past the datagram.
  const std::vector<char> datagram(data, data + size);

  std::optional<net::LinkState> link;
  read_datagram(datagram,
                [&](const nlmsghdr& m) { return net::read_link_message(m, kLinkName, link); });
  if (link) fuzz::check(link->kind.size() < size, "a link kind longer than the datagram");

  for (const auto& want :
       {std::pair{AF_INET, bytes_of(kV4, sizeof kV4)}, std::pair{AF_INET6, bytes_of(kV6, 16)}}) {
    bool found = false;
    read_datagram(datagram, [&](const nlmsghdr& m) {
      return net::read_address_message(m, kLinkIndex, want.first, want.second, found);
    });
    if (found) {
      fuzz::check(fuzz::as_text(data, size).find(want.second) != std::string_view::npos,
                  "an address the answer does not hold");
    }
  }

  std::vector<net::DefaultRoute> routes;
  read_datagram(datagram, [&](const nlmsghdr& m) { return net::read_route_message(m, routes); });
  std::vector<net::InterfaceAddress> addresses;
  read_datagram(datagram, [&](const nlmsghdr& m) {
    return net::read_interface_address_message(m, addresses);
  });
  if (auto chosen = net::choose_node_address(routes, addresses)) {
    bool routed = false;
    for (const auto& r : routes) routed = routed || r.interface_index == chosen->interface_index;
    bool listed = false;
    for (const auto& a : addresses) listed = listed || a.address == chosen->address;
    fuzz::check(routed && listed, "a node address on no default route's interface");
  }

  std::optional<uid_t> uid;
  read_datagram(datagram, [&](const nlmsghdr& m) {
    return net::read_sock_diag_message(m, htons(45678), htons(10267), uid);
  });
  return 0;
}
