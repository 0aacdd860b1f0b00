// The autocast guard: BF16 inside, previous state restored outside, nesting.
#include <ATen/autocast_mode.h>
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "core/autocast_guard.h"

using trainer::core::AutocastGuard;

TEST_CASE("autocast guard: conv runs in bf16 inside and fp32 after") {
  auto x = torch::randn({1, 3, 8, 8});
  auto w = torch::randn({4, 3, 3, 3}, torch::requires_grad());
  CHECK_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16, true);
    CHECK(at::autocast::is_autocast_enabled(at::kCPU));
    CHECK((torch::conv2d(x, w).scalar_type() == at::kBFloat16));
    {
      AutocastGuard inner(at::kCPU, at::kBFloat16, false);  // a disabled scope inside
      CHECK((torch::conv2d(x, w).scalar_type() == at::kFloat));
    }
    CHECK(at::autocast::is_autocast_enabled(at::kCPU));  // restored to the outer state
  }
  CHECK_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  CHECK((torch::conv2d(x, w).scalar_type() == at::kFloat));
}

TEST_CASE("autocast guard: restores a previous dtype") {
  at::autocast::set_autocast_dtype(at::kCPU, at::kHalf);
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16, true);
    CHECK((at::autocast::get_autocast_dtype(at::kCPU) == at::kBFloat16));
  }
  CHECK((at::autocast::get_autocast_dtype(at::kCPU) == at::kHalf));
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
}

TEST_CASE("autocast guard: the cast cache switched off inside, the previous setting restored") {
  REQUIRE(at::autocast::is_autocast_cache_enabled());
  {
    AutocastGuard guard(at::kCPU, at::kBFloat16, true, /*cache_enabled=*/false);
    CHECK_FALSE(at::autocast::is_autocast_cache_enabled());
    {
      AutocastGuard inner(at::kCPU, at::kBFloat16, true);  // unset: the enclosing setting
      CHECK_FALSE(at::autocast::is_autocast_cache_enabled());
    }
    {
      AutocastGuard inner(at::kCPU, at::kBFloat16, true, true);  // asked: on inside
      CHECK(at::autocast::is_autocast_cache_enabled());
    }
    CHECK_FALSE(at::autocast::is_autocast_cache_enabled());
  }
  CHECK(at::autocast::is_autocast_cache_enabled());
}
