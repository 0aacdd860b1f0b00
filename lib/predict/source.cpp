// See source.h.
#include "predict/source.h"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

#include "core/error.h"
#include "data/image_files.h"

namespace trainer::predict {
namespace fs = std::filesystem;
namespace {

std::string lower_suffix(const fs::path& file) {
  std::string s = file.extension().string();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_glob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

std::vector<fs::path> expand_glob(const std::string& pattern) {
  glob_t found{};
  std::vector<fs::path> out;
  if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {  // glob(3) sorts its matches
    for (size_t i = 0; i < found.gl_pathc; ++i) out.emplace_back(found.gl_pathv[i]);
  }
  ::globfree(&found);
  return out;
}

// Adds `file` if it is an image or a video; returns whether it was one.
bool add_media(const fs::path& file, std::vector<SourceFile>& out) {
  if (data::has_image_suffix(file)) {
    out.push_back({file, SourceKind::kImage});
  } else if (has_video_suffix(file)) {
    out.push_back({file, SourceKind::kVideo});
  } else {
    return false;
  }
  return true;
}

void add_folder(const fs::path& dir, std::vector<SourceFile>& out) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) add_media(f, out);
}

void add_path(const std::string& source, const fs::path& base, std::vector<SourceFile>& out,
              int depth) {
  fs::path path(source);
  if (path.is_relative() && !base.empty()) path = base / path;
  if (is_glob(source)) {
    const auto matches = expand_glob(path.string());
    if (matches.empty()) throw core::InputError("source " + path.string() + ": no file matches");
    for (const auto& m : matches) {
      if (fs::is_regular_file(m)) add_media(m, out);
    }
    return;
  }
  if (fs::is_directory(path)) {
    add_folder(path, out);
    return;
  }
  if (!fs::exists(path))
    throw core::InputError("source " + path.string() + ": no such file or folder");
  if (lower_suffix(path) == ".txt") {
    if (depth > 0)
      throw core::InputError("source " + path.string() + ": a .txt list inside a list");
    std::ifstream in(path);
    if (!in) throw core::InputError("source " + path.string() + ": cannot read");
    std::string line;
    while (std::getline(in, line)) {
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
        line.pop_back();
      if (line.empty()) continue;
      add_path(line, path.parent_path(), out, depth + 1);
    }
    return;
  }
  if (!add_media(path, out)) {
    throw core::InputError("source " + path.string() +
                           ": not an image or video (suffixes: bmp dng jpeg jpg mpo png tif tiff "
                           "webp pfm; asf avi gif m4v mkv mov mp4 mpeg mpg ts wmv webm)");
  }
}

}  // namespace

bool has_video_suffix(const fs::path& file) {
  static const std::set<std::string> kSuffixes = {".asf", ".avi",  ".gif", ".m4v", ".mkv", ".mov",
                                                  ".mp4", ".mpeg", ".mpg", ".ts",  ".wmv", ".webm"};
  return kSuffixes.count(lower_suffix(file)) > 0;
}

std::vector<SourceFile> resolve_source(const std::string& source) {
  std::vector<SourceFile> out;
  add_path(source, {}, out, 0);
  if (out.empty()) throw core::InputError("source " + source + ": no images or videos found");
  return out;
}

}  // namespace trainer::predict
