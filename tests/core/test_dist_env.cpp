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

TEST_CASE("torchrun variables: LOCAL_WORLD_SIZE defaults to WORLD_SIZE and bounds LOCAL_RANK") {
  ::setenv("RANK", "2", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("LOCAL_RANK", "0", 1);
  ::unsetenv("LOCAL_WORLD_SIZE");
  CHECK(read_dist_env().local_world_size == 4);
  ::setenv("LOCAL_WORLD_SIZE", "2", 1);
  CHECK(read_dist_env().local_world_size == 2);
  ::setenv("LOCAL_RANK", "2", 1);
  CHECK_THROWS_WITH(read_dist_env(), "LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2");
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"})
    ::unsetenv(name);
}
