// FormulaInputCache: inputs are made once per parameter signature while it
// is kept; it keeps recent signatures up to kKeptBytes of parameters, and
// the last kKept whatever their size.
#include "backend/formula_input_cache.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

// What the cache keeps: which module's signature it was made for.
struct Made {
  std::string name;
};

// An f32[n] module, named by n: 4n bytes of parameters.
std::unique_ptr<Module> Vector(int64_t n) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(absl::StrCat(
      "HloModule v", n, "\nENTRY e {\n  p = f32[", n, "] parameter(0)\n  ROOT n = f32[", n,
      "] negate(p)\n}\n"));
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

class Counting {
 public:
  std::shared_ptr<const Made> Get(FormulaInputCache<Made>& cache, const Module& module) {
    return cache.Get(module, [&](const Module& m) {
      ++made_;
      return std::make_shared<const Made>(Made{m.name()});
    });
  }
  int made() const { return made_; }

 private:
  int made_ = 0;
};

TEST(FormulaInputCacheTest, SmallSignaturesAreKeptWellBeyondTheCount) {
  using Cache = FormulaInputCache<Made>;
  Cache cache;
  Counting counting;
  // 16 signatures of 4 KiB to 64 KiB: far below the byte budget, all kept.
  std::vector<std::unique_ptr<Module>> modules;
  for (int64_t i = 1; i <= 16; ++i) modules.push_back(Vector(1024 * i));
  for (const auto& m : modules) ASSERT_NE(m, nullptr);
  for (const auto& m : modules) EXPECT_EQ(counting.Get(cache, *m)->name, m->name());
  EXPECT_EQ(counting.made(), 16);
  EXPECT_EQ(cache.size(), 16u);
  EXPECT_EQ(cache.bytes(), 4 * 1024 * (16 * 17 / 2));
  // Again, in any order: none is made again.
  for (auto it = modules.rbegin(); it != modules.rend(); ++it) {
    EXPECT_EQ(counting.Get(cache, **it)->name, (*it)->name());
  }
  EXPECT_EQ(counting.made(), 16);
}

TEST(FormulaInputCacheTest, BigSignaturesKeepTheLastFewWithinTheByteBudget) {
  using Cache = FormulaInputCache<Made>;
  Cache cache;
  Counting counting;
  // Each a quarter of the budget and a little more: the budget holds three,
  // the count keeps kKept.
  const int64_t n = Cache::kKeptBytes / 4 / 4 + 1024;
  std::vector<std::unique_ptr<Module>> modules;
  for (int64_t i = 0; i < 6; ++i) modules.push_back(Vector(n + i));
  for (const auto& m : modules) ASSERT_NE(m, nullptr);
  for (const auto& m : modules) counting.Get(cache, *m);
  EXPECT_EQ(counting.made(), 6);
  EXPECT_EQ(cache.size(), Cache::kKept);
  // The last kKept are kept (the most recently used first), the others
  // were dropped and are made again.
  for (size_t i = modules.size() - Cache::kKept; i < modules.size(); ++i) {
    counting.Get(cache, *modules[i]);
  }
  EXPECT_EQ(counting.made(), 6);
  counting.Get(cache, *modules[0]);
  EXPECT_EQ(counting.made(), 7);
  EXPECT_EQ(cache.size(), Cache::kKept);
}

TEST(FormulaInputCacheTest, EqualSignaturesShareInputs) {
  FormulaInputCache<Made> cache;
  Counting counting;
  std::unique_ptr<Module> a = Vector(100);
  absl::StatusOr<std::unique_ptr<Module>> b = ParseModule(
      "HloModule other\nENTRY e {\n  p = f32[100] parameter(0)\n  ROOT a = f32[100] abs(p)\n}\n");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(b.ok()) << b.status();
  // Rewrites keep a module's parameters: the same inputs serve both.
  EXPECT_EQ(counting.Get(cache, *a), counting.Get(cache, **b));
  EXPECT_EQ(counting.made(), 1);
}

}  // namespace
}  // namespace hlogym
