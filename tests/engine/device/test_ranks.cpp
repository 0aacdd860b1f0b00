// Ranks: a single process is rank 0 of 1 (the main rank, first on its machine, keeping the
// device spelling); in a group the rank, the world size and "the main rank" come from the group,
// and a device list gives each local rank its entry.
#include <doctest/doctest.h>

#include <mutex>
#include <vector>

#include "core/error.h"
#include "distributed/rank_threads.h"
#include "engine/device/ranks.h"

using trainer::engine::Ranks;

TEST_CASE("ranks: a single process is the main rank of one and keeps its device spelling") {
  const Ranks single;
  CHECK(single.rank() == 0);
  CHECK(single.world_size() == 1);
  CHECK(single.main());
  CHECK(single.first_on_machine());
  CHECK(single.device("cpu") == "cpu");
  // Without a group the local world is one rank whatever LOCAL_WORLD_SIZE said, so a list of two
  // is not one entry per rank here: the list is refused rather than split.
  Ranks stray;
  stray.local_world_size = 2;
  CHECK_THROWS_AS(stray.device("cpu,cpu"), trainer::core::ConfigError);
}

TEST_CASE("ranks: in a group of two each rank reads its place and its device from the group") {
  std::mutex m;
  std::vector<int> seen_rank(2, -1), seen_world(2, -1), seen_main(2, -1);
  std::vector<std::string> seen_device(2);
  trainer::test::run_ranks("test_ranks", 2, [&](int r, trainer::distributed::Group& group) {
    Ranks ranks;
    // The group's own shared_ptr is not handed out by run_ranks: alias it without ownership.
    ranks.group = std::shared_ptr<trainer::distributed::Group>(&group, [](auto*) {});
    ranks.local_rank = r;
    ranks.local_world_size = 2;
    std::lock_guard<std::mutex> lock(m);
    seen_rank[r] = ranks.rank();
    seen_world[r] = ranks.world_size();
    seen_main[r] = ranks.main() ? 1 : 0;
    seen_device[r] = ranks.device("cpu,cpu");
  });
  CHECK(seen_rank == std::vector<int>{0, 1});
  CHECK(seen_world == std::vector<int>{2, 2});
  CHECK(seen_main == std::vector<int>{1, 0});
  CHECK(seen_device == std::vector<std::string>{"cpu", "cpu"});
}
