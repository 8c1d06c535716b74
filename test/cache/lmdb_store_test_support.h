// Test support for the LMDB store's tests (lmdb_store_test.cc, lmdb_store_open_test.cc): a temp
// directory, opening helpers, a scan that renders objects as text, and the fixture with a store
// open in its own directory. Header-only; test/cache only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/list_identity.h"
#include "cache/lmdb_store.h"
#include "cache/store.h"

namespace yurthub::cache::store_test {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "lmdb_store_test.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string message(const Status& status) {
  return status.ok() ? "ok" : status.error().message;
}

inline std::unique_ptr<Store> must_open(const StoreOptions& options) {
  auto store = open_lmdb_store(options);
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(*store) : nullptr;
}

// "ns/name@rv=json" for every object of `set` the scan visits.
inline std::vector<std::string> scan_all(ReadView& view, std::uint32_t set,
                                         std::string_view ns = "", std::string_view after_ns = "",
                                         std::string_view after_name = "",
                                         std::size_t limit = 1000) {
  std::vector<std::string> out;
  view.scan(set, ns, after_ns, after_name,
            [&](std::string_view n, std::string_view name, const StoredObject& object) {
              out.push_back(std::string(n) + "/" + std::string(name) + "@" +
                            std::to_string(object.resource_version) + "=" +
                            std::string(object.json));
              return out.size() < limit;
            });
  return out;
}

inline ListIdentity pods_identity() {
  return ListIdentity{"kubelet", "", "v1", "pods", "", "", "spec.nodeName=node-1"};
}

class LmdbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_.path() + "/cache";
    store_ = must_open(options());
    ASSERT_NE(store_, nullptr);
  }
  StoreOptions options(bool read_only = false, std::uint64_t map_size = 64ull << 20) const {
    StoreOptions options;
    options.directory = dir_;
    options.map_size = map_size;
    options.read_only = read_only;
    return options;
  }
  void put_objects(std::uint32_t set, const std::vector<std::pair<std::string, std::string>>& keys,
                   std::uint64_t rv = 1) {
    Status status = store_->write([&](WriteTxn& txn) -> Status {
      for (const auto& [ns, name] : keys) {
        Status put = txn.put_object(set, ns, name, rv, "{\"name\":\"" + name + "\"}");
        if (!put) return put;
      }
      return {};
    });
    ASSERT_TRUE(status.ok()) << message(status);
  }

  TempDir tmp_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace yurthub::cache::store_test
