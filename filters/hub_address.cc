// Choosing the in-cluster address of the hub; see hub_address.h.
#include "filters/hub_address.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>

#include <boost/asio/ip/address.hpp>

namespace yurthub::filters {

bool is_local_address(const std::string& address) {
  boost::system::error_code ec;
  const auto wanted = boost::asio::ip::make_address(address, ec);
  if (ec || wanted.is_unspecified()) return false;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    if (i->ifa_addr->sa_family == AF_INET && wanted.is_v4()) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      found = std::memcmp(&in->sin_addr, wanted.to_v4().to_bytes().data(), 4) == 0;
    } else if (i->ifa_addr->sa_family == AF_INET6 && wanted.is_v6()) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      found = std::memcmp(&in6->sin6_addr, wanted.to_v6().to_bytes().data(), 16) == 0;
    }
  }
  freeifaddrs(list);
  return found;
}

HubAddress in_cluster_hub_address(const HubAddressFlags& o, bool https_served) {
  if (!https_served) {
    return {"", "the HTTPS proxy port is off (no --tls-cert-file/--tls-private-key-file)"};
  }
  const std::string listen =
      o.bind_proxy_secure_address.empty() ? o.bind_proxy_address : o.bind_proxy_secure_address;
  const std::string host = o.enable_dummy_if ? o.dummy_if_ip : listen;
  boost::system::error_code ec;
  const auto bound = boost::asio::ip::make_address(listen, ec);
  if (host != listen && !(!ec && bound.is_unspecified())) {
    return {"", "the HTTPS proxy port listens on " + listen + ", not on " + host};
  }
  // With --enable-dummy-if the hub creates the interface before it listens (or does not start).
  if (!o.enable_dummy_if && !is_local_address(host)) {
    return {"", host + " is not configured on any interface of this node"};
  }
  return {host, ""};
}

}  // namespace yurthub::filters
