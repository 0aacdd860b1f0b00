// ASCII lowercasing for names users type: model names, devices, file extensions, config values.
//
// Why: ten files each wrote their own std::tolower loop; one function keeps the rule (ASCII only,
// no locale, bytes >= 0x80 unchanged, so a UTF-8 path stays valid) in one place.
#pragma once

#include <string>
#include <string_view>

namespace trainer::core {

// `text` with 'A'..'Z' mapped to 'a'..'z'; every other byte unchanged.
std::string ascii_lowercase(std::string_view text);

}  // namespace trainer::core
