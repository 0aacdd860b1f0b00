// The distributed-launch environment (torchrun style): RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR.
//
// Why: logging, checkpoint writing and data sharding must know which rank they run on long before
// data-parallel training lands; reading the variables in one place keeps that decision in one
// place.
#pragma once

#include <string>

namespace trainer::core {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // ranks on this machine (LOCAL_WORLD_SIZE)
  std::string master_addr;
  int master_port = 0;

  bool is_main() const { return rank == 0; }
  bool distributed() const { return world_size > 1; }
};

// Reads the environment; absent variables mean a single process. Throws std::runtime_error for
// malformed values (RANK=abc) or an inconsistent pair (RANK >= WORLD_SIZE).
DistEnv read_dist_env();

}  // namespace trainer::core
