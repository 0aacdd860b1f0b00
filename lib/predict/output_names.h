// The names predict writes under: one output stem per source, never shared, and the check that no
// annotated output would replace a source.
//
// Why: two sources of one file name (a glob over folders, a .txt list naming a/img.jpg and
// b/img.jpg) would write the same annotated image, label file and image_id, the second replacing
// the first; and a run folder reused with exist_ok=true may be the source folder itself, where an
// annotated copy would replace the original. Both are decided before the first image is read.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "predict/source.h"

namespace trainer::predict {

// The output stem of each source, in source order: its file stem, or, when an earlier source
// took that stem, the first free of <stem>_2, <stem>_3, ... (a/img.jpg, b/img.jpg, c/img.png:
// img, img_2, img_3). A video writes frame labels <stem>_<frame>, so an image stem of that form
// and the video's stem exclude each other too (clip.avi, clip_3.jpg: clip, clip_3_2).
std::vector<std::string> output_stems(const std::vector<SourceFile>& sources);

// Where a source's annotated copy goes: <save_dir>/<stem><its suffix> for an image,
// <save_dir>/<stem>.mp4 for a video.
std::filesystem::path annotated_output(const SourceFile& source, const std::string& stem,
                                       const std::filesystem::path& save_dir);

// Throws core::ConfigError naming both files, project= and name= when an annotated output would be
// one of the sources (the same file by device and inode, so a symlinked or hard-linked one too):
// a run folder reused by exist_ok=true that holds the sources.
void check_outputs_spare_sources(const std::vector<SourceFile>& sources,
                                 const std::vector<std::string>& stems,
                                 const std::filesystem::path& save_dir);

}  // namespace trainer::predict
