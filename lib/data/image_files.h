// Finding a split's images and their label files, and reading image sizes from file headers.
//
// Why: the reference's path rules in one place: a split is a folder (searched recursively), a .txt
// list (one path per line, relative to the list's folder) or a list of those; accepted suffixes
// bmp dng jpeg jpg mpo png tif tiff webp pfm; the label file is the image path with the last
// `/images/` replaced by `/labels/` and the suffix by `.txt`. Sizes come from the JPEG/PNG header
// (no decode), so indexing a large set costs a few bytes per image.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace trainer::data {

// Sorted image files of all `paths`. Throws core::InputError for a missing path or when nothing
// is found.
std::vector<std::filesystem::path> list_image_files(
    const std::vector<std::filesystem::path>& paths);

bool has_image_suffix(const std::filesystem::path& file);

std::filesystem::path label_path_for_image(const std::filesystem::path& image);

struct ImageHeader {
  int width = 0;
  int height = 0;
  std::string warning;  // e.g. a JPEG without its end marker (decodes, but truncated)
};

// Width and height from the file header (JPEG, PNG; other formats are decoded). On failure
// returns nullopt and sets `error` ("cannot open", "not a JPEG/PNG ...", "truncated header", ...).
std::optional<ImageHeader> read_image_header(const std::filesystem::path& file, std::string* error);

// The JPEG/PNG part of read_image_header on any seekable stream that starts with the image (a
// file, or bytes in memory for tests and the fuzzer), without the 10-pixel rule. On failure
// returns nullopt and sets `error`; `*other_format` (optional) is set when the bytes are neither
// JPEG nor PNG, so that the caller may decode them instead.
std::optional<ImageHeader> parse_image_header(std::istream& in, std::string* error,
                                              bool* other_format = nullptr);

// The reference's minimum: both sides at least 10 pixels; otherwise false with `error` set.
bool large_enough(const ImageHeader& header, std::string* error);

}  // namespace trainer::data
