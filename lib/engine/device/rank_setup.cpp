// See rank_setup.h.
// Tested by tests/integration/test_cli_run_folder.cpp: two ranks from torchrun variables join their
//   group (join_ranks) and fit; launch_listed_ranks only via scripts/ddp_test.sh.
#include "engine/device/rank_setup.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>

#include "core/device_spelling.h"
#include "core/error.h"
#include "distributed/local_launcher.h"
#include "engine/device/device.h"

namespace trainer::engine {

core::DistEnv read_launch_env() {
  try {
    return core::read_dist_env();
  } catch (const std::runtime_error& e) {
    throw core::ConfigError(e.what());
  }
}

std::optional<int> launch_listed_ranks(const core::TrainConfig& config) {
  const auto devices = core::split_device_list(config.run.device);
  if (devices.size() <= 1 || read_launch_env().distributed()) return std::nullopt;
  return distributed::launch_local_ranks(distributed::own_command_line(),
                                         static_cast<int>(devices.size()));
}

RankSetup join_ranks(const core::TrainConfig& config) {
  RankSetup setup;
  const core::DistEnv env = read_launch_env();
  setup.ranks.local_rank = env.local_rank;
  setup.ranks.local_world_size = env.local_world_size;
  const auto ms = [](double seconds) {
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
  };
  if (!env.distributed()) {  // a single worker of torchrun (a restart may leave one) keeps records
    setup.records = distributed::JobRecords::connect(env, ms(config.run.dist_join_timeout));
    return setup;
  }
  const c10::Device device =
      resolve_device(device_for_rank(config.run.device, env.local_rank, env.local_world_size));
  use_device(device);  // NCCL binds to the current device
  distributed::GroupOptions options;
  options.env = env;
  options.backend = distributed::choose_backend(config.run.dist_backend, device.is_cuda());
  options.device = device;
  options.timeouts.steady = ms(config.run.dist_timeout);
  options.timeouts.join = ms(config.run.dist_join_timeout);
  options.timeouts.solo = ms(config.run.dist_solo_timeout);
  setup.ranks.group = distributed::Group::join(options);
  setup.records = setup.ranks.group->records();
  spdlog::info("rank {} of {} joined ({}, {}:{})", env.rank, env.world_size,
               distributed::backend_name(options.backend), env.master_addr, env.master_port);
  return setup;
}

}  // namespace trainer::engine
