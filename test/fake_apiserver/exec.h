// `pods/exec` over WebSocket, the remotecommand protocol kubectl 1.32 speaks by default
// (v5.channel.k8s.io, or v4.channel.k8s.io): binary frames whose first byte is the channel
// (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; v5 adds 255 = "channel N closed"). The fake
// runs no containers; it understands three commands: `echo ARGS...`, `cat` (stdin copied to stdout
// until stdin closes) and anything else (stderr "command not found", exit code 127). The result
// goes out on the error channel as a Status, then the WebSocket closes normally.
// Runs on the connection's coroutine, which hands its TLS stream over for the upgrade.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "test/fake_apiserver/http_io.h"

namespace yurthub::fake {

// The subprotocol to accept from a Sec-WebSocket-Protocol offer: "v5.channel.k8s.io" if offered,
// else "v4.channel.k8s.io", else "" (unsupported).
std::string choose_exec_protocol(std::string_view offered);

// The error-channel Status for an exit code (0 = Success).
std::string exec_status(int exit_code, const std::vector<std::string>& command);

// Accepts the upgrade `req` on `stream` with `protocol` and runs `command`. `closer` is pointed
// at a function that aborts the WebSocket (server shutdown) for as long as the session lives.
boost::asio::awaitable<void> serve_exec(TlsStream stream, http::request<http::string_body> req,
                                        std::string protocol, std::vector<std::string> command,
                                        std::function<void()>& closer);

}  // namespace yurthub::fake
