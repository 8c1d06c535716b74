// Test support for cache units: a real LMDB store in a temp dir with a writer, and a
// ResponseWriter that records what a client would receive. Header-only; test/cache only.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "cache/cache_writer.h"
#include "cache/store.h"
#include "cache/tap_queue.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::cache::test_support {

class StoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/yurthub-cache-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    auto store = open_lmdb_store({dir_ + "/cache", 64u << 20, false});
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    metrics_ = std::make_unique<CacheMetrics>(registry_);
    writer_ = std::make_unique<CacheWriter>(
        *store_, *metrics_, CacheWriter::Options{std::chrono::milliseconds(1), 64u << 20});
  }
  void TearDown() override {
    writer_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Submits and waits until committed.
  void apply(std::vector<CacheOp> ops) {
    ASSERT_TRUE(writer_->submit(std::move(ops)));
    writer_->flush();
  }
  std::optional<std::string> object_json(const std::string& identity, const std::string& ns,
                                         const std::string& name) {
    auto view = store_->read();
    auto record = view->list(identity);
    if (!record) return std::nullopt;
    auto object = view->object(record->set_id, ns, name);
    if (!object) return std::nullopt;
    return std::string(object->json);
  }
  std::vector<std::string> names(const std::string& identity) {
    std::vector<std::string> out;
    auto view = store_->read();
    auto record = view->list(identity);
    if (!record) return out;
    view->scan(record->set_id, "", "", "",
               [&](std::string_view ns, std::string_view name, const StoredObject&) {
                 out.push_back(std::string(ns) + "/" + std::string(name));
                 return true;
               });
    return out;
  }

  std::string dir_;
  base::MetricsRegistry registry_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CacheMetrics> metrics_;
  std::unique_ptr<CacheWriter> writer_;
};

inline CacheOp op(OpKind kind, std::string identity, std::string ns = "", std::string name = "",
                  std::uint64_t rv = 0, std::string json = "") {
  CacheOp o;
  o.kind = kind;
  o.identity = std::move(identity);
  o.namespace_name = std::move(ns);
  o.name = std::move(name);
  o.resource_version = rv;
  o.json = std::move(json);
  return o;
}

// Records a response as a client would receive it. `on_wait` decides what wait_until returns.
class RecordingWriter : public hub::ResponseWriter {
 public:
  unsigned status = 0;
  std::string content_type;
  std::string body;
  bool finished = false;
  int waits = 0;
  std::function<std::optional<hub::StreamEnd>(int call)> on_wait = [](int) {
    return std::optional<hub::StreamEnd>(hub::StreamEnd::ClientGone);
  };

  boost::asio::awaitable<bool> start(unsigned s, std::string_view ct) override {
    status = s;
    content_type = ct;
    co_return true;
  }
  boost::asio::awaitable<bool> write(std::string_view bytes) override {
    body.append(bytes);
    co_return true;
  }
  boost::asio::awaitable<bool> finish() override {
    finished = true;
    co_return true;
  }
  boost::asio::awaitable<std::optional<hub::StreamEnd>> wait_until(
      std::chrono::steady_clock::time_point) override {
    co_return on_wait(++waits);
  }
  std::function<void()> waker() override {
    return [] {};
  }
};

// Runs a coroutine to completion on this thread's io_context. The io_context outlives the call:
// the cache writer's thread posts completions to it and may still be inside that post (signalling
// the io_context's condition variable) when run() returns, as ThreadSanitizer saw.
template <class T>
T run(boost::asio::awaitable<T> awaitable) {
  static thread_local boost::asio::io_context io;
  io.restart();
  auto future = boost::asio::co_spawn(io, std::move(awaitable), boost::asio::use_future);
  io.run();
  return future.get();
}

// Holds the queue's thread in a job until release(): what is posted meanwhile stays queued.
class Blocker {
 public:
  explicit Blocker(TapQueue& queue) {
    queue.post_control([gate = gate_.get_future().share()] { gate.wait(); });
  }
  ~Blocker() { release(); }
  void release() {
    if (!released_) gate_.set_value();
    released_ = true;
  }

 private:
  std::promise<void> gate_;
  bool released_ = false;
};

}  // namespace yurthub::cache::test_support
