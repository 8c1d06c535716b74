// The member templates of Forwarder (hub/forwarder.h): its offline answers; see there. Included by
// hub/forwarder_offline.cc, which instantiates them for the hub's two client streams, and by the
// request path's tests over in-memory streams (test/hub/proxy_session_streams_test.cc).
//
// The Forwarder's answers when no apiserver can be reached: reads the cache can serve are served
// from it, writes the cache journals are read whole and journaled, everything else fails with the
// apiserver's Status. Also the one writer of every local answer (answer_locally), the shared
// watch cache's included. Split from forwarder_impl.h; the same class (forwarder.h), instantiated
// for both client stream types here too.
#pragma once

#include "hub/client_response_writer.h"
#include "hub/filtering_writer.h"
#include "hub/forwarder.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::hub {
namespace asio = boost::asio;

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::unreachable(
    kube::Failure failure, const std::string& detail, RequestParser& parser,
    const kube::RequestInfo& info, bool keep_alive, ForwardResult result) {
  CacheHooks* cache = shared_.cache;
  // With no healthy apiserver every read the cache can answer is answered locally. When a server
  // the health checker still trusts fails, gets and lists fall back to the cache (as YurtHub); a
  // watch does not, since it would then be held until a server turns healthy, which it already is.
  const bool offline = failure == kube::Failure::NoHealthyServer || info.verb == kube::Verb::Get ||
                       info.verb == kube::Verb::List;
  if (cache && offline && cache->serves_offline(info)) {
    co_return co_await answer_locally(parser, info, keep_alive, result, LocalSource::NodeCache);
  }
  // Writes are journaled only when no apiserver is healthy: then nothing of them was sent.
  if (cache && failure == kube::Failure::NoHealthyServer && !replaying_ &&
      cache->serves_offline_write(info)) {
    co_return co_await answer_offline_write(parser, info, keep_alive, result);
  }
  co_return co_await fail(failure, detail, parser, keep_alive, result);
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::answer_locally(
    RequestParser& parser, const kube::RequestInfo& info, bool keep_alive, ForwardResult result,
    LocalSource source, const OfflineWrite* write) {
  keep_alive = keep_alive && parser.is_done() && !shared_.draining;
  ActiveScope scope(client_->active, nullptr, 0);
  unsigned code = 0;
  {
    ClientResponseWriter<Stream> writer(client_, client_version_, keep_alive, info.is_watch());
    if (source == LocalSource::SharedCache) {
      client_->active.from_shared_cache();
      if (filter_) {
        FilteringWriter filtered(writer, *filter_, client_->active, info.is_watch());
        code = co_await shared_.pool->serve(info, filtered);
      } else {
        code = co_await shared_.pool->serve(info, writer);
      }
    } else if (write != nullptr) {
      code = co_await shared_.cache->serve_offline_write(info, *write, writer);
    } else {
      code = co_await shared_.cache->serve_offline(info, writer);
    }
    result.keep_alive = code != 0 && keep_alive && writer.completed() && !info.is_watch();
    result.response_bytes += writer.body_bytes();
  }
  result.status = code;
  result.offline = source == LocalSource::NodeCache;
  if (auto stopped = client_->active.stopped()) result.end = *stopped;
  co_return result;
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::answer_offline_write(
    RequestParser& parser, const kube::RequestInfo& info, bool keep_alive, ForwardResult result) {
  auto& req = parser.get();
  if (!body_->read_whole_already()) {
    const auto read = co_await body_->read_whole(parser, kMaxOfflineWriteBytes);
    if (read.failure) {
      // Named: g++ 12 destroys a conditional's temporary in a co_await expression twice.
      const std::string why = *read.failure == kube::Failure::BodyTooLarge
                                  ? "an offline write is kept up to " +
                                        std::to_string(kMaxOfflineWriteBytes >> 20) + " MiB"
                                  : std::string("while reading the request body");
      co_return co_await fail(*read.failure, why, parser, false, result);
    }
    if (!read.complete) {
      result.keep_alive = false;
      co_return result;
    }
  }
  OfflineWrite write;
  write.body = body_->bytes();
  result.request_bytes += write.body.size();
  const std::string method(req.method_string());
  write.method = method;
  write.target = std::string_view(req.target());
  write.content_type = std::string_view(req[http::field::content_type]);
  write.user_agent = std::string_view(req[http::field::user_agent]);
  write.authorization = client_authorization_;
  co_return co_await answer_locally(parser, info, keep_alive, result, LocalSource::NodeCache,
                                    &write);
}

}  // namespace yurthub::hub
