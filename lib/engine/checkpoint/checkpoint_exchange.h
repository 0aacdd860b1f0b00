// Agreeing on one checkpoint across ranks that need not share a file system.
//
// Why: without a shared file system the run folder lives on rank 0's node alone (no other rank
// writes it), and an elastic restart may put rank 0 on a node that has none. A resume, a restart
// and the non-finite rollback therefore never require the file on every node: the ranks say which
// checkpoint each can read, agree on the newest, and the rank that holds it sends its bytes to the
// ranks that do not hold the same file, so every rank continues from identical state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"

namespace trainer::distributed {
class Group;
}

namespace trainer::engine {

// Which checkpoint a rank may offer: one of this run (`run_id`, "" for any) and, when `epoch` >= 0,
// of that epoch (the rollback's: the one this run last saved).
struct CheckpointWanted {
  std::string run_id;
  int64_t epoch = -1;
};

// What one rank holds at the path asked about.
struct CheckpointOffer {
  int64_t epoch = -1;  // -1: nothing usable (see `why`)
  uint64_t checksum = 0;
  std::string where;  // host:path
  std::string why;    // why nothing is offered (missing, unreadable, another run's, ...)
};

struct AgreedCheckpoint {
  std::optional<Checkpoint> checkpoint;  // none when no rank holds a usable one
  int holder = -1;                       // the rank whose file it is
  std::string where;                     // the holder's host:path
  std::vector<int> sent_to;              // the ranks that received its bytes
  std::vector<CheckpointOffer> offers;   // by rank, for messages
  // "rank 0 (host:path): epoch 3; rank 1 (host:path): missing"
  std::string describe_offers() const;
};

// The newest usable checkpoint at `file` on any rank (the lowest such rank's when several hold
// the newest epoch); every rank of `group` calls it with its own `file` (null group: this
// process alone). Ranks whose file has the holder's bytes (same checksum) read their own; the
// holder broadcasts the bytes to the others. A file that fails to parse is not offered.
AgreedCheckpoint agree_on_checkpoint(distributed::Group* group, const std::filesystem::path& file,
                                     const CheckpointWanted& wanted);

// FNV-1a over `bytes`: equal files have equal checksums on every platform.
uint64_t checkpoint_checksum(const std::vector<char>& bytes);

}  // namespace trainer::engine
