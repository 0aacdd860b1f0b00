// Writing a file so that a crash or kill never leaves a half-written version under its name.
//
// Why: configs, results and checkpoints are what a user keeps; the previous complete version must
// survive a kill at any moment. Write a temporary file beside the target, flush it to disk, then
// rename it over the target (atomic on POSIX) and flush the directory entry. The new version keeps
// an existing target's permission bits; a new file gets 0666 less the umask, as open(2) gives.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::core {

// kFlushed: the content and the directory entry are flushed to disk before returning, so a power
// loss leaves the old or the new version (checkpoints, configs, results). kRenamed: written to the
// temporary and renamed without the flushes, so a failed or killed write (a full disk) never
// leaves a truncated file under the name, at the cost of a page-cache write (predicted images).
enum class Durability { kFlushed, kRenamed };

// Throws std::runtime_error naming the path on any I/O failure; the target is then untouched.
void write_file_atomically(const std::filesystem::path& target, std::string_view content,
                           Durability durability = Durability::kFlushed);

// Removes the temporary files a kill during write_file_atomically left in `dir` (NAME.tmp.XXXXXX
// beside a NAME); returns their paths. Call it only where no other writer is active (a run
// folder when its run starts).
std::vector<std::filesystem::path> remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace trainer::core
