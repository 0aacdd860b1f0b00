// See ranks.h.
#include "engine/device/ranks.h"

#include "engine/device/device.h"

namespace trainer::engine {

std::string Ranks::device(const std::string& spelling) const {
  return device_for_rank(spelling, local_rank, group ? local_world_size : 1);
}

}  // namespace trainer::engine
