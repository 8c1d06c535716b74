// Startup data for the fake apiserver: `--seed=FILE.json` files (a JSON array of objects, or a
// `{"kind":"List","items":[...]}`), each object created as a client's POST would be (uid,
// creationTimestamp, resourceVersion assigned; an existing uid/creationTimestamp is kept), and
// `--generate-pods`: N padded pods in namespace `bulk` for list-streaming tests. Runs once, before
// the server listens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "test/fake_apiserver/api_handlers.h"

namespace yurthub::fake {

// Creates every object in the JSON `text`. Errors name the item index and the reason.
Result<std::size_t> load_seed_text(ApiHandlers& api, std::string_view text);
Result<std::size_t> load_seed_file(ApiHandlers& api, const std::string& path);

// Creates namespace `bulk` (if absent) and `count` pods `bulk-pod-000001`... bound to `node`,
// each padded with an annotation to about `bytes` bytes of JSON.
Result<std::size_t> generate_pods(ApiHandlers& api, std::size_t count, std::size_t bytes,
                                  const std::string& node);

}  // namespace yurthub::fake
