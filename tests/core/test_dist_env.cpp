#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>

#include "core/dist_env.h"

using namespace trainer::core;

TEST_CASE("torchrun variables: absent means one process, present are read") {
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("LOCAL_RANK");
  DistEnv single = read_dist_env();
  CHECK(single.rank == 0);
  CHECK(single.world_size == 1);
  CHECK(single.is_main());
  CHECK_FALSE(single.distributed());
  ::setenv("RANK", "3", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  DistEnv env = read_dist_env();
  CHECK(env.rank == 3);
  CHECK(env.world_size == 4);
  CHECK(env.local_rank == 1);
  CHECK(env.master_addr == "127.0.0.1");
  CHECK_FALSE(env.is_main());
  ::setenv("RANK", "4", 1);
  CHECK_THROWS_AS(read_dist_env(), std::runtime_error);
  ::setenv("RANK", "x", 1);
  CHECK_THROWS_WITH(read_dist_env(),
                    "environment variable RANK must be a non-negative integer, got 'x'");
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("LOCAL_RANK");
  ::unsetenv("MASTER_ADDR");
}
