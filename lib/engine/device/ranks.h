// Where this process stands among a run's data-parallel ranks.
//
// Why one value: the rank, the world size and the place on this machine come from the group
// (a single process is rank 0 of 1). fit, the training context, the validator and the benches
// ask this one value instead of each keeping rank / world_size / local_rank fields that could
// disagree, and "the main rank" is worked out in one place.
#pragma once

#include <memory>
#include <string>

#include "distributed/group.h"

namespace trainer::engine {

struct Ranks {
  std::shared_ptr<distributed::Group> group;  // null: a single process
  int local_rank = 0;                         // on this machine (LOCAL_RANK)
  int local_world_size = 1;                   // ranks on this machine (LOCAL_WORLD_SIZE)

  int rank() const { return group ? group->rank() : 0; }
  int world_size() const { return group ? group->size() : 1; }
  bool main() const { return rank() == 0; }
  // Local rank 0: builds the label and image caches while its machine's other ranks wait.
  bool first_on_machine() const { return local_rank == 0; }
  // This rank's device from the `device` spelling (a list names one per local rank;
  // device_for_rank): a single process keeps the whole spelling.
  std::string device(const std::string& spelling) const;
};

}  // namespace trainer::engine
