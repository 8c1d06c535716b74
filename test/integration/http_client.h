// A minimal HTTP/1.1 client for integration tests that must speak as a particular component
// (kubectl cannot set its User-Agent): one request per connection, chunked bodies decoded, and
// a watch reader that collects events on a background thread.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace yurthub::test {

inline constexpr const char* kKubeletAgent = "kubelet/v1.32.4 (linux/amd64) kubernetes/abc1234";

// A blocking loopback TCP connection with a receive timeout; -1 when it cannot connect.
int connect_to(int port, std::chrono::milliseconds timeout);

struct HttpResponse {
  int status = 0;  // 0: no response
  std::string headers;
  std::string body;  // de-chunked
};

using Headers = std::vector<std::pair<std::string, std::string>>;

HttpResponse http_request(int port, const std::string& method, const std::string& target,
                          const Headers& headers = {}, const std::string& body = "",
                          std::chrono::milliseconds timeout = std::chrono::seconds(30));

// GET as kubelet sends it: its User-Agent and `Accept: protobuf, json`.
HttpResponse kubelet_get(int port, const std::string& target);

// A watch request read on a background thread until the server ends it (or the reader is
// destroyed). Events are the stream's lines.
class WatchStream {
 public:
  WatchStream(int port, const std::string& target, const std::string& user_agent = kKubeletAgent);
  // With these request headers (User-Agent, Accept, Authorization...).
  WatchStream(int port, const std::string& target, const Headers& headers);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  int status() const { return status_.load(); }
  std::vector<std::string> events() const;
  std::size_t event_count() const;
  // The body received so far, de-chunked (an error answer's Status; a protobuf stream's frames).
  std::string body() const;
  bool ended() const { return ended_.load(); }
  bool wait_for_events(std::size_t n, std::chrono::milliseconds timeout) const;
  // Waits for the response header: the hub has then registered the watch (a relayed one is open
  // at the apiserver). False on timeout or if the stream ended first.
  bool wait_for_header(std::chrono::milliseconds timeout) const;
  bool wait_ended(std::chrono::milliseconds timeout) const;
  // Shuts the connection down (from any thread): the reader sees its end.
  void close() const;

 private:
  void run(std::string request);

  int fd_ = -1;
  std::atomic<int> status_{0};
  std::atomic<bool> ended_{false};
  mutable std::mutex mutex_;  // guards events_, body_
  std::vector<std::string> events_;
  std::string body_;
  std::thread thread_;
};

}  // namespace yurthub::test
