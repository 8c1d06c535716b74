// Churn: a control endpoint of the fake apiserver, `POST /_fake/churn?objects=N&events=M
// &namespace=NS[&resource=endpointslices&endpoints=E]`, that updates ConfigMaps c-0..c-(N-1) in NS
// M times in round robin, as fast as watchers take them, so tests can drive a stream of watch
// events (e.g. 10,000) through the hub. With resource=endpointslices it writes EndpointSlices
// svc-0..svc-(N-1) of E endpoints each (spread over nodes edge-node-1..20) instead, after creating
// Services svc-K keyed by host (openyurt.io/topologyKeys), for servicetopology under churn.
// Every write is logged (`churn NS/NAME seq=K rv=R`) so a test can check that an object the hub
// cached is at a resourceVersion the apiserver really sent; `churn done events=M` ends it.
// Called by the Router; runs on the server's (single) thread.
#pragma once

#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

struct ChurnRequest {
  std::string namespace_name = "churn";
  int objects = 100;
  int events = 10000;
  std::string resource = "configmaps";  // or "endpointslices"
  int endpoints = 10;                   // per EndpointSlice
};

// Parses the query (objects, events, namespace); nullopt when a value is bad.
std::optional<ChurnRequest> parse_churn_query(std::string_view query);

// Starts the churn in the background on `executor`.
void start_churn(boost::asio::any_io_executor executor, Store& store, ChurnRequest request);

}  // namespace yurthub::fake
