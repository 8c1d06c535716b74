// Test HTTP client; see http_client.h.
#include "test/integration/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>

namespace yurthub::test {

int connect_to(int port, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

namespace {

std::string build(const std::string& method, const std::string& target, const Headers& headers,
                  const std::string& body) {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
  if (!body.empty()) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return out + "\r\n" + body;
}

// Decodes as much of a chunked body as `raw` holds; returns the bytes consumed.
std::size_t dechunk(const std::string& raw, std::size_t from, std::string& out, bool& done) {
  std::size_t at = from;
  while (true) {
    const auto line_end = raw.find("\r\n", at);
    if (line_end == std::string::npos) return at;
    const std::size_t size = std::stoul(raw.substr(at, line_end - at), nullptr, 16);
    if (raw.size() < line_end + 2 + size + 2) return at;
    if (size == 0) {
      done = true;
      return line_end + 4;
    }
    out.append(raw, line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
}

int status_of(const std::string& raw) {
  std::smatch m;
  return std::regex_search(raw, m, std::regex(R"(^HTTP/1\.[01] (\d{3}))")) ? std::stoi(m[1]) : 0;
}

}  // namespace

HttpResponse http_request(int port, const std::string& method, const std::string& target,
                          const Headers& headers, const std::string& body,
                          std::chrono::milliseconds timeout) {
  HttpResponse response;
  const int fd = connect_to(port, timeout);
  if (fd < 0) return response;
  const std::string request = build(method, target, headers, body);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[65536];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) raw.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  const auto header_end = raw.find("\r\n\r\n");
  if (header_end == std::string::npos) return response;
  response.status = status_of(raw);
  response.headers = raw.substr(0, header_end);
  const bool chunked = std::regex_search(
      response.headers, std::regex("Transfer-Encoding: chunked", std::regex::icase));
  if (chunked) {
    bool done = false;
    dechunk(raw, header_end + 4, response.body, done);
  } else {
    response.body = raw.substr(header_end + 4);
  }
  return response;
}

HttpResponse kubelet_get(int port, const std::string& target) {
  return http_request(port, "GET", target,
                      {{"User-Agent", kKubeletAgent},
                       {"Accept", "application/vnd.kubernetes.protobuf,application/json"}});
}

WatchStream::WatchStream(int port, const std::string& target, const std::string& user_agent)
    : WatchStream(port, target, Headers{{"User-Agent", user_agent}}) {}

WatchStream::WatchStream(int port, const std::string& target, const Headers& headers) {
  fd_ = connect_to(port, std::chrono::seconds(600));
  if (fd_ < 0) {
    ended_ = true;
    return;
  }
  thread_ = std::thread([this, request = build("GET", target, headers, "")] { run(request); });
}

WatchStream::~WatchStream() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void WatchStream::run(std::string request) {
  ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
  std::string raw, body;
  std::size_t parsed = 0, lines_from = 0;
  bool in_body = false, done = false;
  char buf[65536];
  ssize_t n;
  while (!done && (n = ::recv(fd_, buf, sizeof buf, 0)) > 0) {
    raw.append(buf, static_cast<std::size_t>(n));
    if (!in_body) {
      const auto header_end = raw.find("\r\n\r\n");
      if (header_end == std::string::npos) continue;
      status_ = status_of(raw);
      in_body = true;
      parsed = header_end + 4;
    }
    parsed = dechunk(raw, parsed, body, done);
    std::lock_guard lock(mutex_);
    body_.append(body, body_.size());  // the body only grows
    for (auto nl = body.find('\n', lines_from); nl != std::string::npos;
         nl = body.find('\n', lines_from)) {
      events_.push_back(body.substr(lines_from, nl - lines_from));
      lines_from = nl + 1;
    }
  }
  ended_ = true;
}

std::vector<std::string> WatchStream::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

void WatchStream::close() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

std::string WatchStream::body() const {
  std::lock_guard lock(mutex_);
  return body_;
}

std::size_t WatchStream::event_count() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

bool WatchStream::wait_for_events(std::size_t n, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (event_count() < n && !ended_) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return event_count() >= n;
}

bool WatchStream::wait_for_header(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (status_ == 0 && !ended_) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_ != 0;
}

bool WatchStream::wait_ended(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ended_) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace yurthub::test
