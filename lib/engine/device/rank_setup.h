// Joining the data-parallel group a launcher (torchrun, or trainer's own) described.
//
// Why one place: `trainer fit` and `trainer bench interval` must join the same way: torchrun's
// variables, this rank's device from the `device` list, the backend for that device, the
// timeouts (`dist_timeout`, `dist_join_timeout`, `dist_solo_timeout`), and the CUDA device made
// current before NCCL starts.
#pragma once

#include <memory>
#include <optional>

#include "core/config.h"
#include "core/dist_env.h"
#include "distributed/group.h"
#include "engine/device/ranks.h"

namespace trainer::engine {

struct RankSetup {
  Ranks ranks;  // rank 0 of 1 for a single process
  // The job's records under torchrun's agent (the group's, or for a single worker its own
  // client of the agent's store); null elsewhere.
  std::shared_ptr<distributed::JobRecords> records;
};

// torchrun's variables; malformed ones are a core::ConfigError.
core::DistEnv read_launch_env();

// A device list (device=0,1 or cpu,cpu) outside any launcher: starts one rank per device running
// this command line again (distributed/local_launcher.h), waits, and returns their exit status;
// nullopt when this process is to run (one device, or already a launched rank).
std::optional<int> launch_listed_ranks(const core::TrainConfig& config);

// Reads torchrun's variables (malformed ones are a core::ConfigError) and, when they describe
// several ranks, joins their group. Logs "rank R of W joined (...)".
RankSetup join_ranks(const core::TrainConfig& config);

}  // namespace trainer::engine
