// Edit distance between short strings, for "did you mean ..." suggestions.
//
// Why: a mistyped config key should point at the key the user meant; an adjacent transposition
// ("momnetum") counts as one edit, as people make them.
#pragma once

#include <cstddef>
#include <string_view>

namespace trainer::core {

// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
// transpositions each cost 1. Case-sensitive.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace trainer::core
