// A structural check of a torch.save file before LibTorch reads it.
//
// Why: LibTorch's zip reader and unpickler trust the sizes written in the file: a checkpoint with
// one corrupt length field (fuzz finding: a 3 KB file whose pickle declares a 1.9 GB string) made
// torch::pickle_load allocate gigabytes and spend seconds before failing. torch.save writes a zip
// of stored (uncompressed) entries, one of them `<archive>/data.pkl`; we check that every entry
// lies inside the file and that every length and memo index in the pickle fits inside data.pkl,
// so such a file is refused at once with a message instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainer::engine {

// The first structural problem found, or nullopt when LibTorch may read the bytes.
std::optional<std::string> check_torch_zip(const std::vector<char>& bytes);

// The pickle part alone: `data` must be one complete pickle (ending in STOP) whose length-prefixed
// arguments and memo indices fit inside it.
std::optional<std::string> check_pickle(const unsigned char* data, size_t size);

}  // namespace trainer::engine
