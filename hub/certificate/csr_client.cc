// Create a CSR and wait for its certificate; see csr_client.h.
#include "hub/certificate/csr_client.h"

#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/log.h"
#include "hub/certificate/api_call.h"
#include "kube/certificate_signing_request.h"
#include "net/http_io.h"
#include "net/timer.h"

namespace yurthub::hub {
namespace http = boost::beast::http;

namespace {

constexpr int kMaxUnansweredReads = 3;

// "the server refused ...: <Status message>" from an answer that is not the one hoped for.
Error refused(const std::string& what, const ApiAnswer& answer) {
  std::string body = answer.body.substr(0, 512);
  const ErrorCode code = answer.status == 401 || answer.status == 403 ? ErrorCode::PermissionDenied
                                                                      : ErrorCode::Unavailable;
  return make_error(code, what + ": HTTP " + std::to_string(answer.status) + ": " + body);
}

}  // namespace

boost::asio::awaitable<Result<IssuedCertificate>> request_certificate(
    boost::asio::any_io_executor executor, const ServerAddress& server, const net::UpstreamTls& tls,
    const CertificateOrder& order) {
  auto key = net::generate_private_key_pem();
  if (!key) co_return key.error();
  auto request = net::make_certificate_request_pem(*key, order.subject);
  if (!request) co_return request.error();
  kube::CsrSpec spec{*request, order.signer_name, order.usages, std::nullopt};
  ApiCall create{http::verb::post, std::string(kube::kCsrPath), kube::csr_object_json(spec)};
  auto created = co_await api_call(executor, server, tls, std::move(create), order.call_timeout);
  if (!created) co_return created.error();
  if (created->status != 201 && created->status != 200) {
    co_return refused("creating a CertificateSigningRequest on " + server.url, *created);
  }
  auto state = kube::parse_csr_state(created->body);
  if (!state) co_return state.error();
  const std::string name = state->name;
  YH_LOG(Info) << "created CertificateSigningRequest " << name << " (" << order.signer_name
               << ") on " << server.url << "; waiting for its certificate";

  const auto deadline = base::Clock::now() + order.wait;
  net::Timer timer(executor);
  int unreachable = 0;  // reads in a row that got no answer
  for (;;) {
    if (state->phase == kube::CsrState::Phase::Denied ||
        state->phase == kube::CsrState::Phase::Failed) {
      co_return make_error(ErrorCode::InvalidArgument, "CertificateSigningRequest " + name +
                                                           " was not signed: " + state->reason);
    }
    if (state->phase == kube::CsrState::Phase::Issued) break;
    if (base::Clock::now() + order.poll > deadline) {
      co_return make_error(ErrorCode::Unavailable,
                           "CertificateSigningRequest " + name + " was not signed within " +
                               std::to_string(order.wait.count() / 1000) + " s");
    }
    timer.expires_after(order.poll);
    auto [ec] = co_await timer.async_wait(net::kNoThrow);
    if (ec) co_return make_error(ErrorCode::Unavailable, "waiting for the certificate: cancelled");
    ApiCall get{http::verb::get, std::string(kube::kCsrPath) + "/" + name, {}};
    auto read = co_await api_call(executor, server, tls, std::move(get), order.call_timeout);
    if (!read) {
      // The cloud went away: give the CSR up after a few tries rather than poll it for minutes;
      // the caller's retry makes a new one once the server answers again.
      if (++unreachable >= kMaxUnansweredReads) {
        co_return make_error(ErrorCode::Unavailable, "gave up CertificateSigningRequest " + name +
                                                         ": " + read.error().message);
      }
      continue;
    }
    unreachable = 0;
    if (read->status != 200) co_return refused("reading CertificateSigningRequest " + name, *read);
    state = kube::parse_csr_state(read->body);
    if (!state) co_return state.error();
  }
  if (!net::key_matches_certificate(*key, state->certificate_pem)) {
    co_return make_error(ErrorCode::InvalidArgument,
                         "CertificateSigningRequest " + name + " was issued for another key");
  }
  co_return IssuedCertificate{state->certificate_pem, std::move(*key), name};
}

}  // namespace yurthub::hub
