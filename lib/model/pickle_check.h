// The pickle part of the torch.save check (torch_zip_check.h): a scan of `<archive>/data.pkl`
// before LibTorch's unpickler runs it.
//
// Why: LibTorch's unpickler allocates a string as long as its length field says (fuzz finding: a
// 3 KB checkpoint whose pickle declared a 1.9 GB string) and reserves memo slots up to any index,
// so every length and memo index must fit inside the pickle.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace trainer::model {

// The first problem found, or nullopt: `data` must be one complete pickle (ending in STOP) whose
// length-prefixed arguments and memo indices fit inside it.
std::optional<std::string> check_pickle(const unsigned char* data, size_t size);

}  // namespace trainer::model
