// OpenSSL on the socket's descriptor; see socket_tls.h.
#include "net/socket_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

namespace yurthub::net {
namespace {

// The BIO OpenSSL reads and writes the socket through: recv and send on the descriptor, with
// MSG_NOSIGNAL (OpenSSL's own socket BIO writes with write(), which raises SIGPIPE when the
// apiserver has gone, and a test binary does not ignore it). The descriptor stays the socket's.
int descriptor(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

int descriptor_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(descriptor(bio), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(bio);
  return -1;
}

int descriptor_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::recv(descriptor(bio), data, static_cast<std::size_t>(size), 0);
  if (n > 0) return static_cast<int>(n);
  if (n == 0) {
    BIO_set_flags(bio, BIO_FLAGS_IN_EOF);  // OpenSSL asks (BIO_eof) whether a 0 is the end
    return 0;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(bio);
  return -1;
}

long descriptor_ctrl(BIO* bio, int command, long /*number*/, void* /*pointer*/) {
  switch (command) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_EOF:
      return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0 ? 1 : 0;
    default:
      return 0;
  }
}

int descriptor_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* descriptor_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "yurthub descriptor");
    BIO_meth_set_write(m, descriptor_write);
    BIO_meth_set_read(m, descriptor_read);
    BIO_meth_set_ctrl(m, descriptor_ctrl);
    BIO_meth_set_create(m, descriptor_create);
    return m;
  }();
  return method;
}

// The error of a failed call, as Asio's stream reports it.
boost::system::error_code call_error(int ssl_error, unsigned long queued, int system_errno) {
  namespace ssl_errors = boost::asio::ssl::error;
  switch (ssl_error) {
    case SSL_ERROR_ZERO_RETURN:
      return boost::asio::error::eof;  // the apiserver's close_notify
    case SSL_ERROR_SSL:
      if (ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        return ssl_errors::stream_truncated;
      }
      return {static_cast<int>(queued), boost::asio::error::get_ssl_category()};
    case SSL_ERROR_SYSCALL:
      if (queued != 0) return {static_cast<int>(queued), boost::asio::error::get_ssl_category()};
      if (system_errno != 0) return {system_errno, boost::system::system_category()};
      return ssl_errors::unspecified_system_error;
    default:
      return ssl_errors::unexpected_result;
  }
}

}  // namespace

SocketTls::SocketTls(const boost::asio::any_io_executor& executor,
                     boost::asio::ssl::context& context)
    : socket_(executor), ssl_(SSL_new(context.native_handle())) {
  SSL_set_connect_state(ssl_);
  // As Asio's stream: a write may return having sent part of its buffer, and is retried from
  // wherever the caller keeps the rest.
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // One recv takes whatever the socket holds, up to the record buffer, instead of a record's
  // 5-byte header and then its body: half the system calls of a long list.
  SSL_set_read_ahead(ssl_, 1);
  // Not SSL_MODE_RELEASE_BUFFERS, which Asio's stream sets: a pooled upstream connection carries
  // request after request, and re-allocating its two 17 KB record buffers for each showed in the
  // small GET's profile.
}

SocketTls::~SocketTls() { SSL_free(ssl_); }

void SocketTls::attach() {
  if (attached()) return;
  BIO* bio = BIO_new(descriptor_method());
  BIO_set_data(bio,
               reinterpret_cast<void*>(static_cast<intptr_t>(socket_.socket().native_handle())));
  SSL_set_bio(ssl_, bio, bio);  // the SSL owns the BIO (one reference for both directions)
}

// The SSL holds a BIO exactly when the stream is attached: OpenSSL's state, not a flag beside it.
bool SocketTls::attached() const { return SSL_get_rbio(ssl_) != nullptr; }

bool SocketTls::holds_unread() const { return SSL_has_pending(ssl_) == 1; }

SocketTls::Outcome SocketTls::call(Call what, boost::asio::mutable_buffer in,
                                   boost::asio::const_buffer out) {
  if (!attached()) return {Want::Nothing, boost::asio::error::not_connected, 0};
  // SSL_get_error reads the thread's queue, so only this call's errors may be in it. Clearing an
  // empty queue still walks all its slots: three calls were 2.5k of the small GET's 45k
  // instructions (test/bench/callgrind_small_get.sh); peeking reads one.
  if (ERR_peek_error() != 0) ERR_clear_error();
  std::size_t bytes = 0;
  int result = 0;
  switch (what) {
    case Call::Handshake:
      result = SSL_connect(ssl_);
      break;
    case Call::Read:
      if (in.size() == 0) return {};
      result = SSL_read_ex(ssl_, in.data(), in.size(), &bytes);
      break;
    case Call::Write:
      if (out.size() == 0) return {};
      result = SSL_write_ex(ssl_, out.data(), out.size(), &bytes);
      break;
  }
  if (result == 1) return {Want::Nothing, {}, bytes};
  const int system_errno = errno;
  const int ssl_error = SSL_get_error(ssl_, result);
  if (ssl_error == SSL_ERROR_WANT_READ) return {Want::Readable, {}, 0};
  if (ssl_error == SSL_ERROR_WANT_WRITE) return {Want::Writable, {}, 0};
  return {Want::Nothing, call_error(ssl_error, ERR_get_error(), system_errno), 0};
}

}  // namespace yurthub::net
