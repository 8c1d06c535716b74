// admission/options: pool-admission's flags, their defaults and their errors.
#include "admission/options.h"

#include <vector>

#include <gtest/gtest.h>

namespace yurthub::admission {
namespace {

Result<Options> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "pool-admission");
  return parse_options(static_cast<int>(args.size()), args.data());
}

TEST(Options, DefaultsAndBothSpellings) {
  auto o = parse({"--tls-cert-file=c.pem", "--tls-private-key-file", "k.pem"});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->tls_cert_file, "c.pem");
  EXPECT_EQ(o->tls_private_key_file, "k.pem");
  EXPECT_EQ(o->secure_port, 9443);
  EXPECT_EQ(o->bind_address, "0.0.0.0");
  EXPECT_EQ(o->kubeconfig, "");
  EXPECT_EQ(o->labeller_username, "system:serviceaccount:kube-system:pool-admission");
  EXPECT_TRUE(o->node_labeller);

  o = parse({"--tls-cert-file=c", "--tls-private-key-file=k", "--kubeconfig=/etc/kc",
             "--secure-port=0", "--bind-address=127.0.0.1", "--labeller-username=me",
             "--node-labeller=false", "--v=4"});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->kubeconfig, "/etc/kc");
  EXPECT_EQ(o->secure_port, 0);
  EXPECT_EQ(o->bind_address, "127.0.0.1");
  EXPECT_EQ(o->labeller_username, "me");
  EXPECT_FALSE(o->node_labeller);
  EXPECT_EQ(o->verbosity, 4);
}

TEST(Options, ErrorsNameTheFlag) {
  struct Case {
    std::vector<const char*> args;
    std::string message_part;
  };
  const Case cases[] = {
      {{"--tls-cert-file=c"}, "--tls-private-key-file"},
      {{"--tls-cert-file=c", "--tls-private-key-file=k", "--secure-port=65536"}, "--secure-port"},
      {{"--tls-cert-file=c", "--tls-private-key-file=k", "--secure-port=9x"}, "--secure-port"},
      {{"--tls-cert-file=c", "--tls-private-key-file=k", "--node-labeller=yes"}, "--node-labeller"},
      {{"--tls-cert-file=c", "--tls-private-key-file=k", "--proxy-port=1"}, "--proxy-port"},
      {{"--tls-cert-file"}, "needs a value"},
      {{"serve"}, "unexpected argument"},
  };
  for (const Case& c : cases) {
    auto o = parse(c.args);
    ASSERT_FALSE(o) << c.message_part;
    EXPECT_NE(o.error().message.find(c.message_part), std::string::npos) << o.error().message;
  }
  auto help = parse({"--help"});
  ASSERT_TRUE(help);
  EXPECT_TRUE(help->help);
}

}  // namespace
}  // namespace yurthub::admission
