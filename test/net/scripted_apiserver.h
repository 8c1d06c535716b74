// A scripted apiserver for tests of the hub's own informers (Beast, plain HTTP, 127.0.0.1:0) on
// the test's io_context: lists are answered from a queue of replies (per path when one was
// scripted for it, else the shared queue), watches from a queue of scripted streams (events, then
// end or hang), and the test can push events into an open stream. Header-only; used by
// test/net/informer_test.cc and test/filters/filter_manager_test.cc.
#pragma once

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "kube/request_info.h"
#include "net/http_io.h"
#include "test/net/chunked.h"

namespace yurthub::net::test_support {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Request {
  std::string target;
  std::string path;
  std::map<std::string, std::string> query;
  std::string user_agent;
  std::string accept;
  Clock::time_point at;
  bool watch() const { return query.count("watch") > 0; }
};

struct Reply {
  unsigned status = 200;
  std::string body;                 // lists and non-200 watches
  std::vector<std::string> events;  // 200 watches: sent at once, one per chunk
  bool end = false;                 // 200 watches: end cleanly after the events, else hang
};

inline Reply http_reply(unsigned status, std::string body) {
  Reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

inline Reply stream_reply(std::vector<std::string> events, bool end) {
  Reply r;
  r.events = std::move(events);
  r.end = end;
  return r;
}

// One open watch response; push() sends an event, finish() ends it cleanly.
struct WatchStream {
  explicit WatchStream(asio::any_io_executor ex) : wake(ex) {}
  void push(std::string event) {
    pending.push_back(std::move(event));
    wake.cancel();
  }
  void finish() {
    end = true;
    wake.cancel();
  }
  std::deque<std::string> pending;
  bool end = false;
  bool client_closed = false;  // the informer closed the connection
  asio::steady_timer wake;
};

class ScriptedApiserver {
 public:
  explicit ScriptedApiserver(asio::io_context& ioc)
      : acceptor_(ioc, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(ioc, accept_loop(), asio::detached);
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  void on_list(Reply r) { lists_.push_back(std::move(r)); }
  // Lists of `path` take these replies first.
  void on_list(const std::string& path, Reply r) { path_lists_[path].push_back(std::move(r)); }
  void on_watch(Reply r) { watches_.push_back(std::move(r)); }
  std::vector<Request> lists() const { return filtered(false); }
  std::vector<Request> watches() const { return filtered(true); }

  std::vector<Request> requests;
  std::vector<std::shared_ptr<WatchStream>> streams;  // every 200 watch, in order

 private:
  std::vector<Request> filtered(bool watch) const {
    std::vector<Request> out;
    for (const auto& r : requests) {
      if (r.watch() == watch) out.push_back(r);
    }
    return out;
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
      if (ec) co_return;
      asio::co_spawn(acceptor_.get_executor(), serve(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> serve(tcp::socket socket) {
    boost::beast::flat_buffer buffer;
    http::request<http::empty_body> req;
    auto [ec, n] = co_await http::async_read(socket, buffer, req, kNoThrow);
    if (ec) co_return;
    Request r{std::string(req.target()),
              {},
              {},
              std::string(req[http::field::user_agent]),
              std::string(req[http::field::accept]),
              Clock::now()};
    const auto q = r.target.find('?');
    r.path = r.target.substr(0, q);
    if (q != std::string::npos) {
      kube::for_each_query_param(
          std::string_view(r.target).substr(q + 1),
          [&](std::string_view k, std::string_view v) { r.query[std::string(k)] = v; });
    }
    requests.push_back(r);
    auto scripted = path_lists_.find(r.path);
    auto& queue = r.watch()                                                    ? watches_
                  : scripted != path_lists_.end() && !scripted->second.empty() ? scripted->second
                                                                               : lists_;
    Reply reply;
    if (!queue.empty()) {
      reply = std::move(queue.front());
      queue.pop_front();
    } else if (!r.watch()) {
      reply = http_reply(503, R"({"kind":"Status","message":"no scripted list"})");
    }
    if (reply.status != 200 || !r.watch()) {
      co_await write_simple_response(socket, 11, false, reply.status, "application/json",
                                     reply.body);
      co_return;
    }
    auto stream = std::make_shared<WatchStream>(socket.get_executor());
    for (auto& e : reply.events) stream->pending.push_back(e);
    stream->end = reply.end;
    streams.push_back(stream);
    auto shared = std::make_shared<tcp::socket>(std::move(socket));
    asio::co_spawn(shared->get_executor(), detect_close(shared, stream), asio::detached);
    co_await stream_events(shared, stream);
  }

  // The informer sends nothing after its request: a read completing means it closed.
  static asio::awaitable<void> detect_close(std::shared_ptr<tcp::socket> socket,
                                            std::shared_ptr<WatchStream> stream) {
    char byte;
    co_await socket->async_read_some(asio::buffer(&byte, 1), kNoThrow);
    stream->client_closed = true;
  }

  static asio::awaitable<void> stream_events(std::shared_ptr<tcp::socket> socket,
                                             std::shared_ptr<WatchStream> stream) {
    std::string out =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (;;) {
      for (; !stream->pending.empty(); stream->pending.pop_front()) {
        out += yurthub::test_support::chunk(stream->pending.front() + "\n");
      }
      if (stream->end) out += "0\r\n\r\n";
      auto [ec, n] = co_await asio::async_write(*socket, asio::buffer(out), kNoThrow);
      if (ec || stream->end) co_return;
      out.clear();
      // An event pushed during the write above cancelled no wait: send it before waiting.
      if (!stream->pending.empty() || stream->end) continue;
      stream->wake.expires_at(Clock::time_point::max());
      co_await stream->wake.async_wait(kNoThrow);
    }
  }

  tcp::acceptor acceptor_;
  std::deque<Reply> lists_;
  std::map<std::string, std::deque<Reply>> path_lists_;
  std::deque<Reply> watches_;
};

}  // namespace yurthub::net::test_support
