// See source.h.
#include "predict/source.h"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <set>
#include <system_error>

#include "core/ascii_case.h"
#include "core/error.h"
#include "data/image_files.h"

namespace trainer::predict {
namespace fs = std::filesystem;
namespace {

std::string lower_suffix(const fs::path& file) {
  return core::ascii_lowercase(file.extension().string());
}

bool is_glob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

// `text` matching only itself in a glob(3) pattern: a list's folder named `set[1]` stays literal
// in front of the list's own patterns.
std::string glob_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Where a `**` path component starts in `pattern` (npos when none): `**` alone between slashes,
// at the start or at the end; `a**b` is glob(3)'s two stars.
size_t globstar_at(const std::string& pattern) {
  for (size_t at = pattern.find("**"); at != std::string::npos; at = pattern.find("**", at + 1)) {
    const bool starts = at == 0 || pattern[at - 1] == '/';
    const bool ends = at + 2 == pattern.size() || pattern[at + 2] == '/';
    if (starts && ends) return at;
  }
  return std::string::npos;
}

// `dir` and every folder below it, hidden ones (".name") aside, as Python's recursive glob and
// bash's globstar walk them; symlinked folders are not entered (no loops).
std::vector<fs::path> folders_under(const fs::path& dir) {
  std::vector<fs::path> out = {dir};
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind('.', 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec) && !it->is_symlink(ec)) out.push_back(it->path());
  }
  return out;
}

// glob(3), and `**` as a component matching zero or more folders (`data/**/*.jpg` matches
// data/a.jpg and data/x/y/b.jpg). Sorted, without repeats.
std::vector<fs::path> expand_glob(const std::string& pattern) {
  std::vector<fs::path> out;
  const size_t star = globstar_at(pattern);
  if (star == std::string::npos) {
    glob_t found{};
    if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
      for (size_t i = 0; i < found.gl_pathc; ++i) out.emplace_back(found.gl_pathv[i]);
    }
    ::globfree(&found);
    return out;
  }
  const std::string prefix = pattern.substr(0, star);  // "" or ending in '/'
  std::string rest = pattern.substr(star + 2);
  if (!rest.empty()) rest.erase(0, 1);  // the '/' after `**`
  std::vector<fs::path> roots;
  if (prefix.empty()) {
    roots.emplace_back(".");
  } else {
    for (const fs::path& root : expand_glob(prefix)) {
      std::error_code ec;
      if (fs::is_directory(root, ec)) roots.push_back(root);
    }
  }
  for (const fs::path& root : roots) {
    for (const fs::path& dir : folders_under(root)) {
      if (rest.empty()) {  // `data/**`: everything below
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) out.push_back(entry.path());
        continue;
      }
      for (fs::path& m : expand_glob(glob_escape((dir / "").string()) + rest)) {
        out.push_back(std::move(m));
      }
    }
  }
  for (fs::path& p : out) p = p.lexically_normal();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// What `path` is (file_type::not_found when nothing is there). Throws core::InputError for what
// else stat refuses (a name too long, a folder on the way that cannot be searched).
fs::file_type type_of(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec && status.type() != fs::file_type::not_found) {
    throw core::InputError("source " + path.string() + ": " + ec.message());
  }
  return status.type();
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
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) files.push_back(it->path());
  }
  if (ec) throw core::InputError("source " + dir.string() + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) add_media(f, out);
}

void add_path(const std::string& source, const fs::path& base, std::vector<SourceFile>& out,
              int depth);

void add_list(const fs::path& list, std::vector<SourceFile>& out, int depth) {
  if (depth > 0) throw core::InputError("source " + list.string() + ": a .txt list inside a list");
  std::ifstream in(list, std::ios::binary);
  if (!in) throw core::InputError("source " + list.string() + ": cannot read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const SourceListEntry& entry : parse_source_list(text, list)) {
    try {
      add_path(entry.path, list.parent_path(), out, depth + 1);
    } catch (const core::InputError& e) {
      throw core::InputError(fmt::format("{}:{}: {}", list.string(), entry.line, e.what()));
    }
  }
}

void add_path(const std::string& source, const fs::path& base, std::vector<SourceFile>& out,
              int depth) {
  fs::path path(source);
  const bool relative = path.is_relative() && !base.empty();
  if (relative) path = base / path;
  const fs::file_type type = type_of(path);
  if (type == fs::file_type::not_found && is_glob(source)) {
    const std::string pattern =
        relative ? (fs::path(glob_escape(base.string())) / source).string() : path.string();
    const auto matches = expand_glob(pattern);
    if (matches.empty()) throw core::InputError("source " + path.string() + ": no file matches");
    for (const auto& m : matches) {
      std::error_code ec;
      if (fs::is_regular_file(m, ec)) add_media(m, out);
    }
    return;
  }
  if (type == fs::file_type::directory) {
    add_folder(path, out);
    return;
  }
  if (type == fs::file_type::not_found) {
    throw core::InputError("source " + path.string() + ": no such file or folder");
  }
  if (type != fs::file_type::regular) {
    throw core::InputError("source " + path.string() + ": not a regular file");
  }
  if (lower_suffix(path) == ".txt") {
    add_list(path, out, depth);
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

std::vector<SourceListEntry> parse_source_list(std::string_view text, const fs::path& list) {
  static constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) text.remove_prefix(3);
  std::vector<SourceListEntry> out;
  int line = 0;
  while (!text.empty()) {
    ++line;
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view path = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (path.find('\0') != std::string_view::npos) {
      throw core::InputError(
          fmt::format("{}:{}: a NUL byte (not a text list)", list.string(), line));
    }
    while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) {
      path.remove_suffix(1);
    }
    if (!path.empty()) out.push_back({std::string(path), line});
  }
  return out;
}

}  // namespace trainer::predict
