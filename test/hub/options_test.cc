// Tests for hub/options.cc: every flag form pflag accepts, the defaults from YurtHub's
// options.go, every validation error, server address normalisation and usage().
#include "hub/options.h"

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace yurthub::hub {
namespace {

using std::chrono::seconds;

// Runs parse_flags on {"yurthub", args...}.
Result<HubOptions> parse(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"yurthub"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_flags(static_cast<int>(argv.size()), argv.data());
}

// The two required flags followed by `extra`.
Result<HubOptions> parse_with_required(std::initializer_list<std::string> extra) {
  std::vector<std::string> args{"--server-addr=https://10.0.0.1:6443", "--node-name=edge-1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parse(args);
}

TEST(ParseFlags, DefaultsMatchYurtHub) {
  auto r = parse_with_required({});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const HubOptions& o = *r;
  ASSERT_EQ(o.servers.size(), 1u);
  EXPECT_EQ(o.servers[0].url, "https://10.0.0.1:6443");
  EXPECT_EQ(o.node_name, "edge-1");
  EXPECT_EQ(o.nodepool_name, "");
  EXPECT_EQ(o.bind_address, "127.0.0.1");
  EXPECT_EQ(o.serve_port, 10267);
  EXPECT_EQ(o.bind_proxy_address, "127.0.0.1");
  EXPECT_EQ(o.proxy_port, 10261);
  EXPECT_EQ(o.bind_proxy_secure_address, "169.254.2.1");  // YurtHub: the dummy IP, only
  EXPECT_EQ(o.proxy_secure_port, 10268);
  EXPECT_EQ(o.tls_cert_file, "");
  EXPECT_EQ(o.tls_private_key_file, "");
  EXPECT_EQ(o.lb_mode, LbMode::RoundRobin);
  EXPECT_EQ(o.heartbeat_failed_retry, 3);
  EXPECT_EQ(o.heartbeat_healthy_threshold, 2);
  EXPECT_EQ(o.heartbeat_timeout_seconds, 2);
  EXPECT_EQ(o.heartbeat_interval_seconds, 10);
  EXPECT_EQ(o.disk_cache_path, "/etc/kubernetes/cache/");
  EXPECT_EQ(o.root_dir, "/var/lib/yurthub");
  EXPECT_EQ(o.working_mode, WorkingMode::Edge);
  EXPECT_EQ(o.kubeconfig, "/var/lib/yurthub/yurthub.conf");
  EXPECT_EQ(o.min_request_timeout, seconds(1800));
  EXPECT_EQ(o.max_requests_in_flight, 250);
  EXPECT_TRUE(o.enable_resource_filter);
  EXPECT_TRUE(o.disabled_resource_filters.empty());
  EXPECT_EQ(o.hub_namespace, "kube-system");
  EXPECT_EQ(o.worker_threads, 1);
  EXPECT_EQ(o.verbosity, 2);
  EXPECT_TRUE(o.ignored_flags.empty());
  EXPECT_FALSE(o.show_help);
  EXPECT_FALSE(o.show_version);
}

struct AcceptCase {
  std::string name;
  std::vector<std::string> args;  // after the required flags
  std::function<void(const HubOptions&)> check;
};

void PrintTo(const AcceptCase& c, std::ostream* os) { *os << c.name; }

class Accepts : public testing::TestWithParam<AcceptCase> {};

TEST_P(Accepts, ParsesAndStores) {
  const AcceptCase& c = GetParam();
  std::vector<std::string> args{"--server-addr=https://10.0.0.1:6443", "--node-name=edge-1"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  auto r = parse(args);
  ASSERT_TRUE(r.ok()) << r.error().message;
  c.check(*r);
}

const AcceptCase kAcceptCases[] = {
    {"EqualsForm", {"--proxy-port=1234"}, [](auto& o) { EXPECT_EQ(o.proxy_port, 1234); }},
    {"SpaceForm", {"--proxy-port", "1234"}, [](auto& o) { EXPECT_EQ(o.proxy_port, 1234); }},
    {"PortZeroPicksFree", {"--serve-port=0"}, [](auto& o) { EXPECT_EQ(o.serve_port, 0); }},
    {"PortMax",
     {"--proxy-secure-port=65535"},
     [](auto& o) { EXPECT_EQ(o.proxy_secure_port, 65535); }},
    {"SpaceValueStartingWithDash",
     {"--nodepool-name", "-odd"},
     [](auto& o) { EXPECT_EQ(o.nodepool_name, "-odd"); }},
    {"EmptyStringValue", {"--nodepool-name="}, [](auto& o) { EXPECT_EQ(o.nodepool_name, ""); }},
    {"ValueContainingEquals",
     {"--nodepool-name=a=b"},
     [](auto& o) { EXPECT_EQ(o.nodepool_name, "a=b"); }},
    {"LastStringWins",
     {"--node-name=a", "--node-name", "b"},
     [](auto& o) { EXPECT_EQ(o.node_name, "b"); }},
    {"BareBool",
     {"--enable-resource-filter=false", "--enable-resource-filter"},
     [](auto& o) { EXPECT_TRUE(o.enable_resource_filter); }},
    {"BoolFalse",
     {"--enable-resource-filter=false"},
     [](auto& o) { EXPECT_FALSE(o.enable_resource_filter); }},
    {"BoolGoSpellings",
     {"--enable-resource-filter=F"},
     [](auto& o) { EXPECT_FALSE(o.enable_resource_filter); }},
    {"BoolOne",
     {"--enable-resource-filter=0", "--enable-resource-filter=1"},
     [](auto& o) { EXPECT_TRUE(o.enable_resource_filter); }},
    {"SliceCommaSplitTrimmed",
     {"--disabled-resource-filters= masterservice , servicetopology"},
     [](auto& o) {
       EXPECT_EQ(o.disabled_resource_filters,
                 (std::vector<std::string>{"masterservice", "servicetopology"}));
     }},
    {"SliceRepeatedAppends",
     {"--disabled-resource-filters=a", "--disabled-resource-filters", "b,c"},
     [](auto& o) {
       EXPECT_EQ(o.disabled_resource_filters, (std::vector<std::string>{"a", "b", "c"}));
     }},
    {"SliceEmptyValue",
     {"--disabled-resource-filters="},
     [](auto& o) { EXPECT_TRUE(o.disabled_resource_filters.empty()); }},
    {"SliceStar",
     {"--disabled-resource-filters=*"},
     [](auto& o) { EXPECT_EQ(o.disabled_resource_filters, (std::vector<std::string>{"*"})); }},
    {"LbModePriority",
     {"--lb-mode=priority"},
     [](auto& o) { EXPECT_EQ(o.lb_mode, LbMode::Priority); }},
    {"LbModeRr", {"--lb-mode", "rr"}, [](auto& o) { EXPECT_EQ(o.lb_mode, LbMode::RoundRobin); }},
    {"WorkingModeCloud",
     {"--working-mode=cloud"},
     [](auto& o) { EXPECT_EQ(o.working_mode, WorkingMode::Cloud); }},
    {"WorkingModeEdge",
     {"--working-mode=edge"},
     [](auto& o) { EXPECT_EQ(o.working_mode, WorkingMode::Edge); }},
    {"Heartbeats",
     {"--heartbeat-failed-retry=5", "--heartbeat-healthy-threshold=1",
      "--heartbeat-timeout-seconds=7", "--heartbeat-interval-seconds", "30"},
     [](auto& o) {
       EXPECT_EQ(o.heartbeat_failed_retry, 5);
       EXPECT_EQ(o.heartbeat_healthy_threshold, 1);
       EXPECT_EQ(o.heartbeat_timeout_seconds, 7);
       EXPECT_EQ(o.heartbeat_interval_seconds, 30);
     }},
    {"WorkerThreadsBounds",
     {"--worker-threads=64"},
     [](auto& o) { EXPECT_EQ(o.worker_threads, 64); }},
    {"MaxRequestsInFlight",
     {"--max-requests-in-flight=1"},
     [](auto& o) { EXPECT_EQ(o.max_requests_in_flight, 1); }},
    {"MinRequestTimeout",
     {"--min-request-timeout=1h2m3.9s"},
     [](auto& o) { EXPECT_EQ(o.min_request_timeout, seconds(3723)); }},
    {"Verbosity", {"--v=4"}, [](auto& o) { EXPECT_EQ(o.verbosity, 4); }},
    {"VerbositySpace", {"--v", "0"}, [](auto& o) { EXPECT_EQ(o.verbosity, 0); }},
    {"Listeners",
     {"--bind-address=0.0.0.0", "--bind-proxy-address=10.0.0.7", "--tls-cert-file=/c.pem",
      "--tls-private-key-file", "/k.pem", "--enable-dummy-if=false"},
     [](auto& o) {
       EXPECT_EQ(o.bind_address, "0.0.0.0");
       EXPECT_EQ(o.bind_proxy_address, "10.0.0.7");
       EXPECT_EQ(o.bind_proxy_secure_address, "10.0.0.7");  // follows bind-proxy-address
       EXPECT_EQ(o.tls_cert_file, "/c.pem");
       EXPECT_EQ(o.tls_private_key_file, "/k.pem");
     }},
    {"SecureAddressFollowsDummyIp",
     {"--bind-proxy-address=10.0.0.7", "--dummy-if-ip=169.254.3.3"},
     [](auto& o) { EXPECT_EQ(o.bind_proxy_secure_address, "169.254.3.3"); }},
    {"DummyInterface",
     {"--dummy-if-name", "yurthub-dummy0", "--dummy-if-ip=169.254.2.9"},
     [](auto& o) {
       EXPECT_TRUE(o.enable_dummy_if);
       EXPECT_EQ(o.dummy_if_name, "yurthub-dummy0");
       EXPECT_EQ(o.dummy_if_ip, "169.254.2.9");
       EXPECT_TRUE(o.ignored_flags.empty());
     }},
    {"DummyInterfaceIpv6",
     {"--dummy-if-ip=fd00::2:1"},
     [](auto& o) { EXPECT_EQ(o.dummy_if_ip, "fd00::2:1"); }},
    {"NodeIpIsKept",
     {"--node-ip", "192.168.0.7"},
     [](auto& o) {
       EXPECT_EQ(o.node_ip, "192.168.0.7");
       EXPECT_TRUE(o.ignored_flags.empty());
     }},
    {"SecureAddressGiven",
     {"--bind-proxy-address=169.254.2.1", "--bind-proxy-secure-address=0.0.0.0"},
     [](auto& o) { EXPECT_EQ(o.bind_proxy_secure_address, "0.0.0.0"); }},
    {"RootDirMovesKubeconfig",
     {"--root-dir=/opt/hub/"},
     [](auto& o) {
       EXPECT_EQ(o.root_dir, "/opt/hub/");
       EXPECT_EQ(o.kubeconfig, "/opt/hub/yurthub.conf");
     }},
    {"KubeconfigGiven",
     {"--root-dir=/opt/hub", "--kubeconfig=/etc/hub.conf"},
     [](auto& o) { EXPECT_EQ(o.kubeconfig, "/etc/hub.conf"); }},
    {"NodeAndStorage",
     {"--nodepool-name=pool-a", "--namespace=yurt", "--disk-cache-path=/var/cache/hub"},
     [](auto& o) {
       EXPECT_EQ(o.nodepool_name, "pool-a");
       EXPECT_EQ(o.hub_namespace, "yurt");
       EXPECT_EQ(o.disk_cache_path, "/var/cache/hub");
     }},
    {"DoubleDashAtEnd", {"--"}, [](auto& o) { EXPECT_EQ(o.node_name, "edge-1"); }},
};

INSTANTIATE_TEST_SUITE_P(FlagForms, Accepts, testing::ValuesIn(kAcceptCases),
                         [](const auto& info) { return info.param.name; });

struct IgnoredCase {
  std::vector<std::string> args;
  std::string flag;
};

TEST(ParseFlags, CertificateBootstrapFlags) {
  auto token = parse_with_required({"--join-token=abcdef.0123456789abcdef",
                                    "--discovery-token-ca-cert-hash=sha256:aa,sha256:bb",
                                    "--hub-cert-organizations", "a,b", "--root-dir=/r"});
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_TRUE(manages_own_certificate(*token));
  EXPECT_EQ(token->join_token, "abcdef.0123456789abcdef");
  EXPECT_EQ(token->discovery_token_ca_cert_hashes,
            (std::vector<std::string>{"sha256:aa", "sha256:bb"}));
  EXPECT_EQ(token->hub_cert_organizations, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(token->kubeconfig, "/r/yurthub.conf");
  EXPECT_TRUE(token->ignored_flags.empty());

  auto file = parse_with_required({"--bootstrap-file", "/var/lib/yurthub/bootstrap-hub.conf"});
  ASSERT_TRUE(file);
  EXPECT_TRUE(manages_own_certificate(*file));
  auto other = parse_with_required({"--bootstrap-file=/b.conf", "--kubeconfig=/elsewhere.conf"});
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("--kubeconfig"), std::string::npos);

  auto kubelet = parse_with_required(
      {"--bootstrap-mode=kubeletcertificate", "--join-token=abcdef.0123456789abcdef"});
  ASSERT_TRUE(kubelet);
  EXPECT_FALSE(manages_own_certificate(*kubelet));
  EXPECT_EQ(kubelet->kubeconfig, "/etc/kubernetes/kubelet.conf");
  EXPECT_FALSE(parse_with_required({"--bootstrap-mode=hubself"}));

  auto plain = parse_with_required({});
  ASSERT_TRUE(plain);
  EXPECT_FALSE(manages_own_certificate(*plain));
  EXPECT_EQ(plain->kubeconfig, "/var/lib/yurthub/yurthub.conf");
}

TEST(ParseFlags, IgnoredFlagsAreTypedAndNamed) {
  const IgnoredCase cases[] = {
      {{"--enable-iptables=false"}, "--enable-iptables"},
      {{"--enable-node-pool=true"}, "--enable-node-pool"},
      {{"--enable-pool-service-topology"}, "--enable-pool-service-topology"},
      {{"--profiling=false"}, "--profiling"},
      {{"--gc-frequency", "60"}, "--gc-frequency"},
      {{"--kubelet-health-grace-period=40s"}, "--kubelet-health-grace-period"},
      {{"--host-control-plane-address=10.0.0.9:6443"}, "--host-control-plane-address"},
      {{"--logtostderr=true"}, "--logtostderr"},
      {{"--alsologtostderr"}, "--alsologtostderr"},
      {{"--log-file=/var/log/hub.log"}, "--log-file"},
      {{"--log_file=/var/log/hub.log"}, "--log-file"},  // klog spelling, normalised
      {{"--add_dir_header"}, "--add_dir_header"},
      {{"--add-dir-header=false"}, "--add_dir_header"},
      {{"--vmodule=proxy*=4"}, "--vmodule"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"--server-addr=https://a", "--node-name=n"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = parse(args);
    ASSERT_TRUE(r.ok()) << c.args[0] << ": " << r.error().message;
    EXPECT_EQ(r->ignored_flags, std::vector<std::string>{c.flag}) << c.args[0];
    EXPECT_EQ(r->node_name, "n") << c.args[0];  // the value was not taken for another flag
  }
}

TEST(ParseFlags, IgnoredBoolDoesNotConsumeNextArgument) {
  auto r = parse({"--enable-iptables", "--node-name=n", "--profiling", "--server-addr=a",
                  "--enable-iptables=false"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->node_name, "n");
  EXPECT_EQ(r->ignored_flags, (std::vector<std::string>{"--enable-iptables", "--profiling"}));
}

TEST(ParseFlags, DummyInterfaceAddressIsTaken) {
  auto r = parse(
      {"--server-addr=a", "--node-name=n", "--enable-dummy-if=false", "--dummy-if-ip=169.254.9.9"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->enable_dummy_if);
  EXPECT_EQ(r->dummy_if_ip, "169.254.9.9");
  EXPECT_TRUE(r->ignored_flags.empty());
}

TEST(ParseFlags, HelpAndVersionSkipRequiredFlags) {
  for (const char* flag : {"-h", "--help", "--help=true"}) {
    auto r = parse({flag});
    ASSERT_TRUE(r.ok()) << flag << ": " << r.error().message;
    EXPECT_TRUE(r->show_help) << flag;
  }
  auto v = parse({"--version"});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_TRUE(v->show_version);
  EXPECT_FALSE(v->show_help);
  auto off = parse({"--help=false"});
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.error().message, "missing required flag --server-addr");
}

struct ServerCase {
  std::string value;
  std::vector<std::string> urls, hosts, ports;
};

TEST(ParseFlags, ServerAddressesAreNormalised) {
  const ServerCase cases[] = {
      {"https://10.0.0.1:6443", {"https://10.0.0.1:6443"}, {"10.0.0.1"}, {"6443"}},
      {"10.0.0.1:6443", {"https://10.0.0.1:6443"}, {"10.0.0.1"}, {"6443"}},
      {"https://api.example.com", {"https://api.example.com:443"}, {"api.example.com"}, {"443"}},
      {"api.example.com", {"https://api.example.com:443"}, {"api.example.com"}, {"443"}},
      {"HTTPS://api:6443/", {"https://api:6443"}, {"api"}, {"6443"}},
      {"https://[fd00::1]:6443", {"https://[fd00::1]:6443"}, {"fd00::1"}, {"6443"}},
      {"[::1]", {"https://[::1]:443"}, {"::1"}, {"443"}},
      {"https://a:1, https://b:2,c",
       {"https://a:1", "https://b:2", "https://c:443"},
       {"a", "b", "c"},
       {"1", "2", "443"}},
  };
  for (const auto& c : cases) {
    auto r = parse({"--node-name=n", "--server-addr=" + c.value});
    ASSERT_TRUE(r.ok()) << c.value << ": " << r.error().message;
    ASSERT_EQ(r->servers.size(), c.urls.size()) << c.value;
    for (std::size_t i = 0; i < c.urls.size(); ++i) {
      EXPECT_EQ(r->servers[i].url, c.urls[i]) << c.value;
      EXPECT_EQ(r->servers[i].host, c.hosts[i]) << c.value;
      EXPECT_EQ(r->servers[i].port, c.ports[i]) << c.value;
    }
  }
}

struct RejectCase {
  std::string name;
  std::vector<std::string> args;  // after the required flags
  std::vector<std::string> want;  // substrings of the error message
};

void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.name; }

class Rejects : public testing::TestWithParam<RejectCase> {};

TEST_P(Rejects, WithMessageNamingFlagAndValue) {
  const RejectCase& c = GetParam();
  std::vector<std::string> args{"--server-addr=https://10.0.0.1:6443", "--node-name=edge-1"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  auto r = parse(args);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << "one line";
  for (const auto& w : c.want)
    EXPECT_NE(r.error().message.find(w), std::string::npos) << r.error().message << " lacks " << w;
}

const RejectCase kRejectCases[] = {
    {"ServePortHigh", {"--serve-port=65536"}, {"--serve-port", "\"65536\"", "0..65535"}},
    {"DummyIpNotIp", {"--dummy-if-ip=hub"}, {"--dummy-if-ip", "\"hub\"", "not an IP address"}},
    {"NodeIpNotIp", {"--node-ip=node-1"}, {"--node-ip", "\"node-1\"", "not an IP address"}},
    {"DummyIpOutsideLinkLocal", {"--dummy-if-ip=10.0.0.1"}, {"--dummy-if-ip", "169.254.0.0/16"}},
    {"DummyIpReservedRange", {"--dummy-if-ip=169.254.31.7"}, {"--dummy-if-ip", "169.254.31.0/24"}},
    {"DummyIpReserved", {"--dummy-if-ip=169.254.1.1"}, {"--dummy-if-ip", "reserved"}},
    {"DummyNameTooLong", {"--dummy-if-name=a-name-of-16-byt"}, {"--dummy-if-name", "15 bytes"}},
    {"DummyNameEmpty", {"--dummy-if-name="}, {"--dummy-if-name", "15 bytes"}},
    {"DummyNameSlash", {"--dummy-if-name=a/b"}, {"--dummy-if-name", "not an interface name"}},
    {"ProxyPortNegative", {"--proxy-port=-1"}, {"--proxy-port", "\"-1\""}},
    {"SecurePortHigh", {"--proxy-secure-port", "70000"}, {"--proxy-secure-port", "70000"}},
    {"PortNotNumber", {"--proxy-port=http"}, {"--proxy-port", "\"http\"", "not an integer"}},
    {"PortTrailingJunk", {"--proxy-port=80x"}, {"--proxy-port", "\"80x\""}},
    {"IntOverflow", {"--gc-frequency=99999999999"}, {"--gc-frequency", "99999999999"}},
    {"LbMode", {"--lb-mode=consistent-hashing"}, {"--lb-mode", "consistent-hashing"}},
    {"WorkingModeLocal",
     {"--working-mode=local"},
     {"--working-mode", "working mode local is not supported by this hub"}},
    {"WorkingModeOther", {"--working-mode=fog"}, {"--working-mode", "\"fog\""}},
    {"HeartbeatTimeout",
     {"--heartbeat-timeout-seconds=0"},
     {"--heartbeat-timeout-seconds", "\"0\""}},
    {"HeartbeatInterval",
     {"--heartbeat-interval-seconds=-5"},
     {"--heartbeat-interval-seconds", "-5"}},
    {"HeartbeatThreshold", {"--heartbeat-healthy-threshold=0"}, {"--heartbeat-healthy-threshold"}},
    {"HeartbeatRetry", {"--heartbeat-failed-retry=0"}, {"--heartbeat-failed-retry", "at least 1"}},
    {"WorkerThreadsZero", {"--worker-threads=0"}, {"--worker-threads", "\"0\"", "1..64"}},
    {"WorkerThreadsHigh", {"--worker-threads=65"}, {"--worker-threads", "\"65\""}},
    {"MaxInFlight", {"--max-requests-in-flight=0"}, {"--max-requests-in-flight", "\"0\""}},
    {"MinRequestTimeout",
     {"--min-request-timeout=30"},
     {"--min-request-timeout", "\"30\"", "unit"}},
    {"MinRequestTimeoutNegative", {"--min-request-timeout=-1s"}, {"--min-request-timeout", "-1s"}},
    {"IgnoredDuration", {"--kubelet-health-grace-period=soon"}, {"--kubelet-health-grace-period"}},
    {"IgnoredInt", {"--gc-frequency=x"}, {"--gc-frequency", "\"x\""}},
    {"BoolBadValue", {"--enable-resource-filter=yes"}, {"--enable-resource-filter", "\"yes\""}},
    {"IgnoredBoolBadValue", {"--profiling=nope"}, {"--profiling", "\"nope\""}},
    {"BoolWithSpaceValue", {"--enable-resource-filter", "false"}, {"unexpected argument", "false"}},
    {"Positional", {"extra"}, {"unexpected argument", "\"extra\""}},
    {"AfterDoubleDash", {"--", "x"}, {"unexpected argument", "\"x\""}},
    {"UnknownFlag",
     {"--access-server-through-hub=true"},
     {"unknown flag", "--access-server-through-hub"}},
    {"Shorthand", {"-v=4"}, {"shorthand", "-v=4"}},
    {"TripleDash", {"---v=4"}, {"bad flag syntax", "---v=4"}},
    {"BareDashDashEquals", {"--=x"}, {"bad flag syntax"}},
    {"MissingValue", {"--node-ip"}, {"flag needs an argument", "--node-ip"}},
    {"MissingValueString", {"--root-dir"}, {"flag needs an argument", "--root-dir"}},
    {"SchemeHttp",
     {"--server-addr=http://10.0.0.1:6443"},
     {"--server-addr", "scheme \"http\"", "http://10.0.0.1:6443"}},
    {"SchemeInList",
     {"--server-addr=https://a,wss://b"},
     {"--server-addr", "\"wss://b\": scheme \"wss\""}},
    {"ServerBadPort", {"--server-addr=https://a:99999"}, {"--server-addr", "port \"99999\""}},
    {"ServerPortZero", {"--server-addr=https://a:0"}, {"--server-addr", "port \"0\""}},
    {"ServerBareIpv6", {"--server-addr=fd00::1"}, {"--server-addr", "brackets"}},
    {"ServerUnclosedIpv6", {"--server-addr=https://[fd00::1:6443"}, {"--server-addr", "IPv6"}},
    {"ServerPath", {"--server-addr=https://a:6443/k8s"}, {"--server-addr", "path"}},
    {"ServerUserInfo", {"--server-addr=https://u:p@a:6443"}, {"--server-addr", "user info"}},
    {"ServerEmptyEntry",
     {"--server-addr=https://a,,https://b"},
     {"--server-addr", "empty address"}},
    {"ServerNoHost", {"--server-addr=https://:6443"}, {"--server-addr", "missing host"}},
    {"ServerBadHost", {"--server-addr=https://a b"}, {"--server-addr", "bad host"}},
};

INSTANTIATE_TEST_SUITE_P(Validation, Rejects, testing::ValuesIn(kRejectCases),
                         [](const auto& info) { return info.param.name; });

TEST(ParseFlags, ExactMessages) {
  const std::pair<std::string, std::string> cases[] = {
      {"--server-addr=http://10.0.0.1:6443",
       "invalid value \"http://10.0.0.1:6443\" for --server-addr: scheme \"http\" is not "
       "supported (only https)"},
      {"--working-mode=local",
       "invalid value \"local\" for --working-mode: working mode local is not supported by this "
       "hub"},
      {"--proxy-port=65536", "invalid value \"65536\" for --proxy-port: must be 0..65535"},
      {"--lb-mode=random", "invalid value \"random\" for --lb-mode: must be rr or priority"},
      {"--min-request-timeout=30",
       "invalid value \"30\" for --min-request-timeout: invalid duration \"30\": missing unit"},
      {"--bogus", "unknown flag: --bogus"},
  };
  for (const auto& [arg, want] : cases) {
    auto r = parse({"--node-name=n", "--server-addr=https://a", arg});
    ASSERT_FALSE(r.ok()) << arg;
    EXPECT_EQ(r.error().message, want);
  }
}

TEST(ParseFlags, RequiredFlags) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{}, "missing required flag --server-addr"},
      {{"--node-name=n"}, "missing required flag --server-addr"},
      {{"--node-name=n", "--server-addr="}, "missing required flag --server-addr"},
      {{"--server-addr=https://a"}, "missing required flag --node-name"},
      {{"--server-addr=https://a", "--node-name="}, "missing required flag --node-name"},
  };
  for (const auto& [args, want] : cases) {
    auto r = parse(args);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, want);
  }
}

TEST(Usage, ListsEveryFlagWithDefaultsAndCompatibilityMarks) {
  const std::string text = usage();
  auto line_of = [&](const std::string& flag) {
    const auto at = text.find("--" + flag + " ");
    if (at == std::string::npos) return std::string();
    const auto start = text.rfind('\n', at) + 1;
    return text.substr(start, text.find('\n', at) - start);
  };
  const std::pair<const char*, const char*> own[] = {
      {"server-addr", ""},
      {"node-name", ""},
      {"nodepool-name", ""},
      {"bind-address", "(default 127.0.0.1)"},
      {"serve-port", "(default 10267)"},
      {"bind-proxy-address", "(default 127.0.0.1)"},
      {"proxy-port", "(default 10261)"},
      {"bind-proxy-secure-address", ""},
      {"proxy-secure-port", "(default 10268)"},
      {"tls-cert-file", ""},
      {"tls-private-key-file", ""},
      {"lb-mode", "(default rr)"},
      {"heartbeat-failed-retry", "(default 3)"},
      {"heartbeat-healthy-threshold", "(default 2)"},
      {"heartbeat-timeout-seconds", "(default 2)"},
      {"heartbeat-interval-seconds", "(default 10)"},
      {"disk-cache-path", "(default /etc/kubernetes/cache/)"},
      {"root-dir", "(default /var/lib/yurthub)"},
      {"working-mode", "(default edge)"},
      {"kubeconfig", "(default <root-dir>/yurthub.conf)"},
      {"min-request-timeout", "(default 1800s)"},
      {"max-requests-in-flight", "(default 250)"},
      {"enable-resource-filter", "(default true)"},
      {"disabled-resource-filters", ""},
      {"enable-dummy-if", "(default true)"},
      {"dummy-if-ip", "(default 169.254.2.1)"},
      {"dummy-if-name", "(default hub-dummy0)"},
      {"namespace", "(default kube-system)"},
      {"worker-threads", "(default 1)"},
      {"v", "(default 2)"},
      {"help", ""},
      {"version", ""},
  };
  for (const auto& [flag, def] : own) {
    const std::string line = line_of(flag);
    ASSERT_FALSE(line.empty()) << "--" << flag << " missing from usage";
    EXPECT_NE(line.find(def), std::string::npos) << line;
    EXPECT_EQ(line.find("ignored"), std::string::npos) << line;
  }
  for (const char* flag :
       {"enable-iptables", "enable-node-pool", "enable-pool-service-topology", "profiling",
        "gc-frequency", "kubelet-health-grace-period", "host-control-plane-address", "logtostderr",
        "alsologtostderr", "log-file", "add_dir_header"}) {
    const std::string line = line_of(flag);
    ASSERT_FALSE(line.empty()) << "--" << flag << " missing from usage";
    EXPECT_NE(line.find("(accepted for compatibility; ignored)"), std::string::npos) << line;
  }
  EXPECT_NE(line_of("proxy-port").find("--proxy-port int"), std::string::npos);
  EXPECT_NE(line_of("min-request-timeout").find("duration"), std::string::npos);
  EXPECT_NE(line_of("dummy-if-ip").find("(default 169.254.2.1)"), std::string::npos);
}

}  // namespace
}  // namespace yurthub::hub
