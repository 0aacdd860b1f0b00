// What `source=` names, as a sorted list of image and video files (the reference's
// LoadImagesAndVideos rules).
//
// Why: one place decides which files a prediction runs on, before any model is loaded, so a
// mistyped path or an empty folder stops with a message naming it. Forms: one image or video
// file; a folder (its images and videos, not recursive, sorted by name); a glob (`dir/*.jpg`,
// sorted; `**` as a whole component matches zero or more folders, hidden ones aside, as Python's
// recursive glob and bash's globstar: `data/**/*.jpg` includes data/a.jpg); a .txt list (one path
// per line, relative to the list's folder when relative, in the list's order, which may name
// folders or globs too). A path that exists is itself even when it holds glob characters (a folder
// named `set[1]`).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::predict {

enum class SourceKind { kImage, kVideo };

struct SourceFile {
  std::filesystem::path path{};
  SourceKind kind{SourceKind::kImage};
};

// The reference's suffixes (case-insensitive): images bmp dng jpeg jpg mpo png tif tiff webp
// pfm; videos asf avi gif m4v mkv mov mp4 mpeg mpg ts wmv webm.
bool has_video_suffix(const std::filesystem::path& file);

// Throws core::InputError naming the path for a missing file or folder, a file that is neither
// an image nor a video, a glob that matches nothing, or a source with no images or videos; an
// entry of a .txt list that is wrong is named with the list's file and line.
std::vector<SourceFile> resolve_source(const std::string& source);

// One entry of a .txt list: the path as written and its 1-based line.
struct SourceListEntry {
  std::string path{};
  int line{0};
};

// The entries of a .txt list's `text`: one per line that is not blank, in order, without the
// whitespace at its end (a CRLF list reads as an LF one) or a UTF-8 byte-order mark at the start.
// Throws core::InputError naming `list` and the line for a NUL byte (a binary file, not a list).
std::vector<SourceListEntry> parse_source_list(std::string_view text,
                                               const std::filesystem::path& list);

}  // namespace trainer::predict
