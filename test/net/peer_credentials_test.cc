// loopback_peer_uid (net/peer_credentials.h): the uid owning the other end of a loopback TCP
// connection, as the kernel's socket table has it. A connection from this process is its own
// uid; one from a child that dropped to nobody (65534) is nobody's, where SO_PEERCRED says -1
// for both. Needs root for the child's setuid (CI and the README's commands run as root).
#include "net/peer_credentials.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

namespace yurthub::net {
namespace {

using boost::asio::ip::tcp;

TEST(PeerCredentials, TheUidOfALoopbackPeerIsTheKernels) {
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  tcp::socket server = acceptor.accept();
  EXPECT_EQ(loopback_peer_uid(server.local_endpoint(), server.remote_endpoint()), ::getuid());

  if (::getuid() != 0) GTEST_SKIP() << "the other user's half needs root to setuid";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // nobody connects and waits
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    boost::asio::io_context child_io;
    tcp::socket s(child_io);
    boost::system::error_code ec;
    s.connect(acceptor.local_endpoint(), ec);
    const char byte = ec ? 'e' : 'c';
    (void)!::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'c');
  tcp::socket from_nobody = acceptor.accept();
  EXPECT_EQ(loopback_peer_uid(from_nobody.local_endpoint(), from_nobody.remote_endpoint()),
            uid_t{65534});
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(PeerCredentials, NotLoopbackOrNotThereIsUnknown) {
  const tcp::endpoint local(boost::asio::ip::make_address("127.0.0.1"), 10267);
  EXPECT_FALSE(loopback_peer_uid(local, {boost::asio::ip::make_address("192.0.2.7"), 40000}));
  EXPECT_FALSE(loopback_peer_uid(local, {boost::asio::ip::make_address("127.0.0.1"), 1}));
}

}  // namespace
}  // namespace yurthub::net
