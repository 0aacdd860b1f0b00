// Image listing, label paths and header sizes; see image_files.h.
#include "data/image_files.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <istream>
#include <set>
#include <utility>
#include <vector>

#include "core/ascii_case.h"
#include "core/error.h"
#include "data/codecs/exif_orientation.h"
#include "data/image_codec.h"

namespace fs = std::filesystem;

namespace trainer::data {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

int be16(const unsigned char* p) {
  return (p[0] << 8) | p[1];
}
int be32(const unsigned char* p) {
  return static_cast<int>((uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) |
                          uint32_t(p[3]));
}

// Walks the segments up to the frame header: its size, turned by an Exif orientation found on the
// way (cv::imread turns the image, so the reported size is the turned one). Reads only the
// segment headers and an APP1 segment, never the image data.
std::optional<ImageHeader> jpeg_header(std::istream& in, std::string* error) {
  unsigned char buf[9];
  int orientation = 1;
  in.seekg(2);
  for (;;) {
    int byte = in.get();
    if (byte == EOF) break;
    if (byte != 0xFF) continue;
    int marker = in.get();
    while (marker == 0xFF) marker = in.get();
    if (marker == EOF) break;
    if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    if (marker == 0xD9 || marker == 0xDA) break;  // end of image / start of scan before a frame
    if (!in.read(reinterpret_cast<char*>(buf), 2)) break;
    const int length = be16(buf);
    if (length < 2) break;
    const bool sof =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      if (!in.read(reinterpret_cast<char*>(buf), 5)) break;
      if (buf[0] != 8) {  // 12-bit (SOF1/SOF3): neither libjpeg-turbo 2.x nor PIL reads it
        *error = fmt::format(
            "{}-bit JPEG: this build's decoders read 8-bit JPEG only (so do the reference's "
            "PIL and OpenCV)",
            static_cast<int>(buf[0]));
        return std::nullopt;
      }
      ImageHeader h;
      h.height = be16(buf + 1);
      h.width = be16(buf + 3);
      if (orientation >= 5) std::swap(h.width, h.height);
      in.seekg(-2, std::ios::end);
      unsigned char tail[2] = {0, 0};
      in.read(reinterpret_cast<char*>(tail), 2);
      if (tail[0] != 0xFF || tail[1] != 0xD9) h.warning = "JPEG has no end marker (truncated?)";
      return h;
    }
    if (marker == 0xE1 && orientation == 1) {
      std::vector<uint8_t> payload(static_cast<size_t>(length - 2));
      if (!in.read(reinterpret_cast<char*>(payload.data()),
                   static_cast<std::streamsize>(payload.size()))) {
        break;
      }
      orientation = codecs::exif_app1_orientation(payload.data(), payload.size());
      continue;
    }
    in.seekg(length - 2, std::ios::cur);
  }
  *error = "corrupt JPEG: no frame header";
  return std::nullopt;
}

}  // namespace

bool has_image_suffix(const fs::path& file) {
  static const std::set<std::string> kSuffixes = {".bmp", ".dng", ".jpeg", ".jpg",  ".mpo",
                                                  ".png", ".tif", ".tiff", ".webp", ".pfm"};
  return kSuffixes.count(core::ascii_lowercase(file.extension().string())) > 0;
}

namespace {

bool is_inside(const fs::path& dir, const fs::path& ancestor) {
  auto a = ancestor.begin();
  for (auto d = dir.begin(); a != ancestor.end(); ++a, ++d) {
    if (d == dir.end() || *d != *a) return false;
  }
  return true;
}

// The images under `folder`, following symlinks as `find -L` does: a link that loops back to a
// folder above it, a link to itself or a broken link is skipped with a warning, and the listing
// goes on.
void add_folder_images(const fs::path& folder, std::vector<fs::path>& files) {
  std::error_code ec;
  const auto options = fs::directory_options::follow_directory_symlink |
                       fs::directory_options::skip_permission_denied;
  fs::recursive_directory_iterator it(folder, options, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    std::error_code status_error;
    const fs::file_status status = entry.status(status_error);
    if (status_error == std::errc::no_such_file_or_directory) {
      if (has_image_suffix(entry.path())) {
        spdlog::warn("{}: skipped: a broken symlink", entry.path().string());
      }
      continue;
    }
    if (status_error) {
      spdlog::warn("{}: skipped: {} (a symlink loop?)", entry.path().string(),
                   status_error.message());
      continue;
    }
    if (fs::is_directory(status) && entry.is_symlink(status_error)) {
      const fs::path target = fs::canonical(entry.path(), status_error);
      const fs::path here = fs::canonical(entry.path().parent_path(), status_error);
      if (status_error || is_inside(here, target)) {
        spdlog::warn("{}: skipped: a symlink to {}, a folder it is already inside (a loop)",
                     entry.path().string(), target.string());
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!has_image_suffix(entry.path())) continue;
    if (fs::is_regular_file(status)) files.push_back(entry.path());
  }
  if (ec) {
    throw core::InputError(
        fmt::format("{}: cannot list the folder: {}", folder.string(), ec.message()));
  }
}

}  // namespace

std::vector<fs::path> list_image_files(const std::vector<fs::path>& paths) {
  std::vector<fs::path> files;
  for (const fs::path& p : paths) {
    if (fs::is_directory(p)) {
      add_folder_images(p, files);
    } else if (fs::is_regular_file(p)) {
      std::ifstream in(p);
      std::string line;
      const fs::path parent = p.parent_path();
      while (std::getline(in, line)) {
        line = trim(line);
        if (line.empty()) continue;
        fs::path f = line.rfind("./", 0) == 0 ? parent / line.substr(2) : fs::path(line);
        if (f.is_relative()) f = parent / f;
        if (has_image_suffix(f)) files.push_back(f.lexically_normal());
      }
    } else {
      throw core::InputError(fmt::format("{}: image folder or list does not exist", p.string()));
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) {
    std::string joined;
    for (const auto& p : paths) joined += (joined.empty() ? "" : ", ") + p.string();
    throw core::InputError(fmt::format("{}: no images found", joined));
  }
  return files;
}

fs::path label_path_for_image(const fs::path& image) {
  std::string s = image.string();
  const std::string from = "/images/";
  const size_t at = s.rfind(from);
  if (at != std::string::npos) s.replace(at, from.size(), "/labels/");
  fs::path out(s);
  out.replace_extension(".txt");
  return out;
}

std::optional<ImageHeader> parse_image_header(std::istream& in, std::string* error,
                                              bool* other_format) {
  if (other_format) *other_format = false;
  unsigned char sig[24] = {};
  in.read(reinterpret_cast<char*>(sig), sizeof(sig));
  const auto got = in.gcount();
  in.clear();
  if (got >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF) return jpeg_header(in, error);
  if (got >= 24 && sig[0] == 0x89 && sig[1] == 'P' && sig[2] == 'N' && sig[3] == 'G') {
    return ImageHeader{be32(sig + 16), be32(sig + 20), ""};
  }
  if (got == 0) {
    *error = "empty image file";
  } else {
    *error = "not a JPEG or PNG header";
    if (other_format) *other_format = true;
  }
  return std::nullopt;
}

std::optional<ImageHeader> read_image_header(const fs::path& file, std::string* error) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    *error = "image not found or unreadable";
    return std::nullopt;
  }
  bool other_format = false;
  std::optional<ImageHeader> header = parse_image_header(in, error, &other_format);
  if (other_format) {
    std::vector<uint8_t> bytes;
    read_file_bytes(file, &bytes);
    std::string why;
    const cv::Mat im = decode_image_bgr(bytes, &why);
    if (im.empty()) {
      *error = "cannot decode image: " + why;
      return std::nullopt;
    }
    header = ImageHeader{im.cols, im.rows, ""};
  }
  if (header && !large_enough(*header, error)) return std::nullopt;
  return header;
}

bool large_enough(const ImageHeader& header, std::string* error) {
  if (header.width >= 10 && header.height >= 10) return true;
  *error = fmt::format("image size {}x{} is under 10 pixels", header.width, header.height);
  return false;
}

}  // namespace trainer::data
