#include "core/inline_budget.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "weft/errors.hpp"

namespace weft::core {

TEST(InlineBudget, ChargesUpToTheLimitAndNeverPast) {
  InlineBudget b;
  b.set_limit(1000);
  EXPECT_TRUE(b.try_acquire(600));
  EXPECT_FALSE(b.try_acquire(401));  // 1001 > 1000
  EXPECT_TRUE(b.try_acquire(400));   // exactly the limit
  EXPECT_FALSE(b.try_acquire(1));
  EXPECT_EQ(b.used(), 1000u);
  b.release(600);
  EXPECT_EQ(b.used(), 400u);
  EXPECT_EQ(b.peak(), 1000u);
  EXPECT_FALSE(b.try_acquire(size_t(-1)));  // no wrap-around
}

TEST(InlineBudget, ConcurrentChargesStayWithinTheLimit) {
  InlineBudget b;
  b.set_limit(64 * 1000);
  std::vector<std::thread> ts;
  std::atomic<int> granted{0};
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        if (b.try_acquire(64)) {
          granted.fetch_add(1);
          if (i % 3 == 0) b.release(64), granted.fetch_sub(1);
        }
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_LE(b.peak(), b.limit());
  EXPECT_EQ(b.used(), size_t(granted.load()) * 64);
}

TEST(InlineBudget, PayloadReturnsItsChargeWhenItDies) {
  InlineBudget& b = inline_budget();
  const size_t before = b.used();
  {
    ASSERT_TRUE(b.try_acquire(InlineBudget::charge(1000)));
    BudgetedPayload p(std::vector<char>(1000, 'x'));
    EXPECT_EQ(b.used(), before + 1000 + InlineBudget::kOverheadBytes);
    EXPECT_EQ(p.size(), 1000u);
  }
  EXPECT_EQ(b.used(), before);
}

TEST(InlineBudget, TinyValuesAreFreeAndNeverRefused) {
  InlineBudget b;
  b.set_limit(0);
  EXPECT_EQ(InlineBudget::charge(InlineBudget::kChargedFrom - 1), 0u);
  EXPECT_TRUE(b.try_acquire(InlineBudget::charge(4)));
  EXPECT_FALSE(b.try_acquire(InlineBudget::charge(InlineBudget::kChargedFrom)));
  EXPECT_EQ(b.used(), 0u);
}

TEST(InlineBudget, PayloadKeepsBytesInPlaceOrOnTheHeap) {
  InlineBudget& b = inline_budget();
  const size_t before = b.used();
  for (size_t n : {size_t{0}, size_t{1}, BudgetedPayload::kInPlace, BudgetedPayload::kInPlace + 1,
                   size_t{100000}}) {
    std::vector<char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(i * 31 + n);
    ASSERT_TRUE(b.try_acquire(InlineBudget::charge(n)));
    {
      BudgetedPayload p(v);
      ASSERT_EQ(p.size(), n);
      EXPECT_TRUE(std::equal(v.begin(), v.end(), p.data())) << n << " bytes";
    }
    EXPECT_EQ(b.used(), before) << n << " bytes";
  }
}

TEST(InlineBudget, WithoutAStoreValuesStayInlineUncharged) {
  const size_t before = inline_budget().used();
  auto p = owned_payload(ObjectId{0, 0, 1}, std::vector<char>{1, 2, 3});
  EXPECT_EQ(p->size(), 3u);
  EXPECT_EQ(p->data()[2], 3);
  EXPECT_EQ(inline_budget().used(), before);
}

TEST(InlineBudget, LimitSettingDefaultsAndErrors) {
  Config cfg;
  EXPECT_EQ(inline_owner_limit(cfg), size_t{256} << 20);
  cfg.set("inline_owner_limit", "1M");
  EXPECT_EQ(inline_owner_limit(cfg), size_t{1} << 20);
  cfg.set("inline_owner_limit", "0");
  EXPECT_EQ(inline_owner_limit(cfg), 0u);
  cfg.set("inline_owner_limit", "-1K");
  try {
    inline_owner_limit(cfg);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_INLINE_OWNER_LIMIT"), std::string::npos) << e.what();
  }
  cfg.set("inline_owner_limit", "lots");
  try {
    inline_owner_limit(cfg);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("inline_owner_limit"), std::string::npos) << e.what();
  }
}

}  // namespace weft::core
