// A structural check of a torch.save file before LibTorch reads it.
//
// Why: LibTorch's zip reader and unpickler trust the sizes written in the file: a checkpoint with
// one corrupt length field (fuzz finding: a 3 KB file whose pickle declares a 1.9 GB string) made
// torch::pickle_load allocate gigabytes and spend seconds before failing, and a storage record
// shorter than the tensor built on it is read past its end. torch.save writes a zip of stored
// (uncompressed) entries inside one folder, the archive; LibTorch takes the archive's name from
// the FIRST entry, reads `<archive>/data.pkl` and the storage records `<archive>/data/<key>` that
// the pickle names, and finds names case-insensitively. We check that every entry lies inside the
// file, that no two names collide for that lookup, that the pickle LibTorch will read passes
// check_pickle (pickle_check.h) and that each storage record it names exists and is as large as
// its tensor, so such a file is refused at once with a message instead. Checkpoints (.ckpt) and
// weights (.pt) both read through torch_load_bytes (torch_save.h), which runs this check first.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainer::model {

// The first structural problem found, or nullopt when LibTorch may read the bytes.
std::optional<std::string> check_torch_zip(const std::vector<char>& bytes);

}  // namespace trainer::model
