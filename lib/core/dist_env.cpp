#include "core/dist_env.h"

#include <cstdlib>
#include <stdexcept>

namespace trainer::core {
namespace {

int int_env(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0) {
    throw std::runtime_error(std::string("environment variable ") + name +
                             " must be a non-negative integer, got '" + text + "'");
  }
  return static_cast<int>(value);
}

}  // namespace

DistEnv read_dist_env() {
  DistEnv env;
  env.rank = int_env("RANK", 0);
  env.world_size = int_env("WORLD_SIZE", 1);
  env.local_rank = int_env("LOCAL_RANK", env.rank);
  env.local_world_size = int_env("LOCAL_WORLD_SIZE", env.world_size);
  env.master_port = int_env("MASTER_PORT", 0);
  if (const char* addr = std::getenv("MASTER_ADDR")) env.master_addr = addr;
  if (env.world_size < 1 || env.rank >= env.world_size) {
    throw std::runtime_error("RANK=" + std::to_string(env.rank) +
                             " is not below WORLD_SIZE=" + std::to_string(env.world_size));
  }
  if (env.local_world_size < 1 || env.local_rank >= env.local_world_size) {
    throw std::runtime_error(
        "LOCAL_RANK=" + std::to_string(env.local_rank) +
        " is not below LOCAL_WORLD_SIZE=" + std::to_string(env.local_world_size));
  }
  return env;
}

}  // namespace trainer::core
