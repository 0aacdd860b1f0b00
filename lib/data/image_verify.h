// Every image of a split decoded once when its label cache is built.
//
// Why: a header can be intact while the pixels are not (a truncated upload, a bad disk sector, a
// file that is not what its name says). The reference verifies images while caching labels; a
// corrupt image found only at training time would otherwise end a run mid-epoch. The full decode
// runs on all cores, each decode within the process's decode budget (data/decode_budget.h: a few
// huge images are decoded one at a time instead of exhausting memory), and its verdict is cached
// with the labels, so a second start costs nothing.
// Files are never modified: a JPEG without its end marker that still decodes is kept (the decoder
// fills what is missing, which is what the reference's re-saved copy would contain too) and
// reported; one that does not decode is skipped.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/image_files.h"

namespace trainer::data {

struct ImageVerdict {
  std::optional<ImageHeader> header;  // the decoded size (EXIF-turned); empty when unusable
  std::string error;                  // why it is unusable
  std::string warning;                // usable, but worth a line in `trainer data check`
};

// Header, pixel limit and a full decode of one file.
ImageVerdict verify_image(const std::filesystem::path& file);

// verify_image for each file, in order, on up to `threads` threads (0: all cores).
std::vector<ImageVerdict> verify_images(const std::vector<std::filesystem::path>& files,
                                        int threads = 0);

}  // namespace trainer::data
