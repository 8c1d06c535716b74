// The admin port; see admin_server.h.
#include "hub/admin_server.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/json_parse.h"
#include "base/log.h"
#include "net/http_io.h"
#include "net/peer_credentials.h"
#include "net/spawn.h"
#include "net/timed_socket.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

double boot_time_seconds() {
  std::ifstream stat("/proc/stat");
  std::string key;
  double value = 0;
  while (stat >> key) {
    if (key == "btime") {
      stat >> value;
      return value;
    }
  }
  return 0;
}

}  // namespace

std::string render_process_metrics() {
  std::ifstream in("/proc/self/stat");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the parenthesised command name (which may contain spaces).
  std::istringstream fields(content.substr(content.rfind(')') + 2));
  std::vector<std::string> f;
  for (std::string token; fields >> token;) f.push_back(token);
  if (f.size() < 22) return "";
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  // Field numbers of proc(5) minus 3 (pid, comm, state come before).
  const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  const double start = boot_time_seconds() + std::stod(f[19]) / ticks;
  const double vsize = std::stod(f[20]);
  const double rss = std::stod(f[21]) * page;
  std::size_t fds = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  std::ostringstream out;
  out.precision(15);
  out << "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
      << "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total " << cpu << "\n"
      << "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
      << "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes " << rss << "\n"
      << "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
      << "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes " << vsize << "\n"
      << "# HELP process_open_fds Number of open file descriptors.\n"
      << "# TYPE process_open_fds gauge\nprocess_open_fds " << fds << "\n"
      << "# HELP process_start_time_seconds Start time of the process since unix epoch in "
         "seconds.\n"
      << "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds " << start << "\n"
      << "# HELP node_yurthub_coroutine_exceptions_total Background tasks ended by an exception "
         "(a bug; each is logged).\n"
      << "# TYPE node_yurthub_coroutine_exceptions_total counter\n"
         "node_yurthub_coroutine_exceptions_total "
      << net::escaped_exceptions() << "\n";
  return out.str();
}

bool trusted_local_peer(std::optional<uid_t> uid) {
  return uid && (*uid == 0 || *uid == ::geteuid());
}

AdminServer::AdminServer(const base::MetricsRegistry& registry, ReadinessCheck readiness,
                         TokenUpdate token_update, ConnectionLimits* limits, AdminRoutes routes,
                         ReadinessNotes notes)
    : registry_(registry),
      readiness_(std::move(readiness)),
      notes_(std::move(notes)),
      token_update_(std::move(token_update)),
      limits_(limits),
      routes_(std::move(routes)) {}

std::pair<unsigned, std::string> AdminServer::update_token(const std::string& body,
                                                           std::optional<uid_t> uid) const {
  if (!trusted_local_peer(uid)) {
    YH_LOG(Warning) << "admin: refused a join token posted by "
                    << (uid ? "uid " + std::to_string(*uid) : std::string("a remote peer"));
    return {403, "a join token is taken only from root or the hub's own user on this node\n"};
  }
  if (!token_update_) {
    return {400,
            "the hub does not use a join token (--bootstrap-mode=token with "
            "--bootstrap-file or --join-token)\n"};
  }
  rapidjson::Document doc;
  if (!base::parse_json(body, doc) || !doc.IsObject() || !doc.HasMember("jointoken") ||
      !doc["jointoken"].IsString() || doc["jointoken"].GetStringLength() == 0) {
    return {400, "the body must be {\"jointoken\":\"<token>\"}\n"};
  }
  if (Status updated = token_update_(doc["jointoken"].GetString()); !updated) {
    const bool too_soon = updated.error().code == ErrorCode::ResourceExhausted;
    return {too_soon ? 429u : 400u, updated.error().message + "\n"};
  }
  // As YurtHub answers; the token is adopted once cluster discovery with it succeeds.
  return {200, "update bootstrap token successfully"};
}

asio::awaitable<void> AdminServer::serve(net::TcpSocket socket) {
  const std::optional<ConnectionLimits::Slot> slot =
      limits_ != nullptr ? limits_->acquire(ConnectionLimits::peer_of(socket)) : std::nullopt;
  if (limits_ != nullptr) {
    if (!slot) {
      YH_LOG(Warning) << "admin: refused a connection: connection bounds reached";
      boost::system::error_code ignored;
      socket.close(ignored);
      co_return;
    }
  }
  std::optional<uid_t> peer_uid;
  {
    boost::system::error_code lec, rec;
    const auto local = socket.local_endpoint(lec);
    const auto remote = socket.remote_endpoint(rec);
    if (!lec && !rec) peer_uid = net::loopback_peer_uid(local, remote);
  }
  net::TimedSocket stream(std::move(socket));
  beast::flat_buffer buffer(64 * 1024);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(4 * 1024);
    stream.expires_after(std::chrono::seconds(60));
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, net::kNoThrow);
    if (ec) break;
    const auto& req = parser.get();
    const std::string_view target(req.target().data(), req.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    const bool keep_alive = req.keep_alive();
    bool written = false;
    if (path == "/v1/healthz") {
      written = co_await net::write_simple_response(stream, req.version(), keep_alive, 200,
                                                    "text/plain", "OK");
    } else if (path == "/v1/readyz") {
      const auto not_ready = readiness_();
      const unsigned code = not_ready ? 500 : 200;
      std::string body = not_ready.value_or("OK");
      // Probes read the code only; an operator reading the body also learns what runs degraded.
      if (const std::string notes = notes_ ? notes_() : ""; !notes.empty()) body += "\n" + notes;
      written = co_await net::write_simple_response(stream, req.version(), keep_alive, code,
                                                    "text/plain", body);
    } else if (path == "/v1/token" && req.method() == http::verb::post) {
      const std::pair<unsigned, std::string> answer = update_token(req.body(), peer_uid);
      written = co_await net::write_simple_response(stream, req.version(), keep_alive, answer.first,
                                                    "text/plain", answer.second);
    } else if (routes_.claims && routes_.claims(path)) {
      const AdminRequest request{req.method(), std::string(path), peer_uid};
      const AdminAnswer answer = co_await routes_.handle(request);
      stream.expires_after(std::chrono::seconds(60));  // the handler's calls took their time
      written = co_await net::write_simple_response(
          stream, req.version(), keep_alive, answer.status, answer.content_type, answer.body);
    } else if (path == "/metrics") {
      written = co_await net::write_simple_response(stream, req.version(), keep_alive, 200,
                                                    "text/plain; version=0.0.4; charset=utf-8",
                                                    registry_.render() + render_process_metrics());
    } else {
      written = co_await net::write_simple_response(stream, req.version(), keep_alive, 404,
                                                    "text/plain", "404 page not found\n");
    }
    if (!written || !keep_alive) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace yurthub::hub
