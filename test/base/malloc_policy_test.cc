// The allocator's thresholds (base/malloc_policy.h), read back through what glibc reports: a block
// below kOwnMappingBytes comes from an arena rather than its own mapping, and freed memory at the
// top of the arena stays there. Skipped under a sanitizer, whose allocator is not glibc's.
#include "base/malloc_policy.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace yurthub::base {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcMalloc = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcMalloc = false;
#else
constexpr bool kGlibcMalloc = true;
#endif
#else
constexpr bool kGlibcMalloc = true;
#endif

TEST(MallocPolicyTest, AFreedListSizedBlockStaysForTheNextList) {
  if (!kGlibcMalloc) GTEST_SKIP() << "a sanitizer's allocator";
  ASSERT_TRUE(keep_freed_memory_for_reuse());
  const std::size_t mapped_before = mallinfo2().hblkhd;
  // A tap piece, well past glibc's own first threshold (128 KiB): from the arena now.
  void* piece = std::malloc(kOwnMappingBytes / 2);
  ASSERT_NE(piece, nullptr);
  std::memset(piece, 1, kOwnMappingBytes / 2);
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before);
  const std::size_t kept_before = mallinfo2().fordblks;
  std::free(piece);
  // Freed, it is kept (the arena's free bytes grew by it) rather than given back.
  EXPECT_GE(mallinfo2().fordblks, kept_before + kOwnMappingBytes / 2);
  // A block past the bound still gets its own mapping.
  void* big = std::malloc(kOwnMappingBytes + 4096);
  ASSERT_NE(big, nullptr);
  EXPECT_GE(mallinfo2().hblkhd, mapped_before + kOwnMappingBytes);
  std::free(big);
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before);
}

}  // namespace
}  // namespace yurthub::base
