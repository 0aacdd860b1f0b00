// The check before a file given by the user is opened: missing and "a folder" are told apart.
//
// Why: opening a folder as a file gets as far as the C++ library's read, whose message
// ("basic_filebuf::underflow ... Is a directory") names neither the key nor the path.
#pragma once

#include <filesystem>
#include <string>

namespace trainer::core {

// Throws ConfigError "<what> not found: <path><not_found_note>" for a missing path, and
// "<what>: <path> is a folder, not a file" (naming weights/last.ckpt or weights/best.pt inside it
// when it is a run folder) for a folder.
void require_file(const std::filesystem::path& path, const std::string& what,
                  const std::string& not_found_note = "");

}  // namespace trainer::core
