// See file_checks.h.
#include "core/file_checks.h"

#include "core/error.h"

namespace trainer::core {

void require_file(const std::filesystem::path& path, const std::string& what,
                  const std::string& not_found_note) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::string hint;
    for (const char* inside : {"weights/last.ckpt", "weights/best.pt"}) {
      if (fs::is_regular_file(path / inside, ec)) {
        hint = " (a run folder: did you mean " + (path / inside).string() + "?)";
        break;
      }
    }
    throw ConfigError(what + ": " + path.string() + " is a folder, not a file" + hint);
  }
  if (!fs::exists(path, ec))
    throw ConfigError(what + " not found: " + path.string() + not_found_note);
}

}  // namespace trainer::core
