// WebSocket exec; see exec.h. Framing per k8s.io/apimachinery/pkg/util/httpstream/wsstream and
// client-go tools/remotecommand (websocket.go): stdout/stderr frames are [channel][data]; the
// error channel carries one metav1.Status; a v5 client signals stdin EOF with [255][0].
#include "test/fake_apiserver/exec.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "base/log.h"

namespace yurthub::fake {
namespace {

namespace asio = boost::asio;
namespace websocket = boost::beast::websocket;
using WsStream = websocket::stream<TlsStream>;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

constexpr unsigned char kStdin = 0, kStdout = 1, kStderr = 2, kError = 3, kClose = 255;

asio::awaitable<ErrorCode> send(WsStream& ws, unsigned char channel, std::string_view data) {
  std::string frame(1, static_cast<char>(channel));
  frame += data;
  auto [ec, n] = co_await ws.async_write(asio::buffer(frame), kNoThrow);
  (void)n;
  co_return ec;
}

std::string join(const std::vector<std::string>& parts, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += ' ';
    out += parts[i];
  }
  return out;
}

// Copies stdin frames to stdout until stdin closes. False if the WebSocket itself ended.
asio::awaitable<bool> run_cat(WsStream& ws) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    buffer.clear();
    auto [ec, n] = co_await ws.async_read(buffer, kNoThrow);
    (void)n;
    if (ec) co_return false;
    std::string_view msg(static_cast<const char*>(buffer.data().data()), buffer.size());
    if (msg.empty()) continue;
    auto channel = static_cast<unsigned char>(msg[0]);
    msg.remove_prefix(1);
    if (channel == kClose && !msg.empty() && static_cast<unsigned char>(msg[0]) == kStdin) {
      co_return true;
    }
    if (channel == kStdin && !msg.empty()) {
      ErrorCode wec = co_await send(ws, kStdout, msg);
      if (wec) co_return false;
    }
    // Resize (4) and other channels mean nothing without a terminal.
  }
}

}  // namespace

std::string choose_exec_protocol(std::string_view offered) {
  bool v4 = false;
  std::size_t pos = 0;
  while (pos <= offered.size()) {
    std::size_t comma = offered.find(',', pos);
    if (comma == std::string_view::npos) comma = offered.size();
    std::string_view p = offered.substr(pos, comma - pos);
    while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
    while (!p.empty() && p.back() == ' ') p.remove_suffix(1);
    if (p == "v5.channel.k8s.io") return std::string(p);
    if (p == "v4.channel.k8s.io") v4 = true;
    pos = comma + 1;
  }
  return v4 ? "v4.channel.k8s.io" : "";
}

std::string exec_status(int exit_code, const std::vector<std::string>& command) {
  if (exit_code == 0) return "{\"metadata\":{},\"status\":\"Success\"}";
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  std::string code = std::to_string(exit_code);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("status");
  w.String("Failure");
  w.Key("message");
  w.String("command terminated with non-zero exit code: error executing command [" +
           join(command, 0) + "], exit code " + code);
  w.Key("reason");
  w.String("NonZeroExitCode");
  w.Key("details");
  w.StartObject();
  w.Key("causes");
  w.StartArray();
  w.StartObject();
  w.Key("reason");
  w.String("ExitCode");
  w.Key("message");
  w.String(code);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

asio::awaitable<void> serve_exec(TlsStream stream, http::request<http::string_body> req,
                                 std::string protocol, std::vector<std::string> command,
                                 std::function<void()>& closer) {
  WsStream ws(std::move(stream));
  closer = [&ws] { boost::beast::get_lowest_layer(ws).close(); };
  struct ResetCloser {  // declared after ws: runs before ws is destroyed
    std::function<void()>& closer;
    ~ResetCloser() { closer = nullptr; }
  } reset{closer};
  boost::beast::get_lowest_layer(ws).expires_never();  // the WebSocket has its own timeouts
  ws.set_option(websocket::stream_base::timeout::suggested(boost::beast::role_type::server));
  ws.set_option(websocket::stream_base::decorator([protocol](websocket::response_type& res) {
    res.set(http::field::sec_websocket_protocol, protocol);
  }));
  auto [ec] = co_await ws.async_accept(req, kNoThrow);
  if (ec) {
    YH_LOG(Warning) << "exec: websocket upgrade failed: " << ec.message();
    co_return;
  }
  ws.binary(true);
  int exit_code = 0;
  std::string program = command.empty() ? "" : command[0];
  if (program == "echo") {
    ec = co_await send(ws, kStdout, join(command, 1) + "\n");
  } else if (program == "cat") {
    bool ok = co_await run_cat(ws);
    if (!ok) co_return;  // the client went away: nobody to report to
  } else {
    exit_code = 127;
    ec = co_await send(ws, kStderr, "fake-apiserver: command not found\n");
  }
  if (!ec) ec = co_await send(ws, kError, exec_status(exit_code, command));
  if (!ec) {
    auto [close_ec] = co_await ws.async_close(websocket::close_code::normal, kNoThrow);
    (void)close_ec;
  }
}

}  // namespace yurthub::fake
