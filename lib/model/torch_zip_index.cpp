// Tested by tests/model/test_torch_load.cpp: zip index: first entry's folder decides data.pkl
//   (decoy ignored), case-duplicate names and stray first entry refused.
// See torch_zip_index.h. Zip: the end-of-central-directory record (zip64 when a field is
// saturated), then one central directory entry per record (method, sizes, local header offset,
// name; zip64 sizes in the 0x0001 extra field), each record's data after its local header.
#include "model/torch_zip_index.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace trainer::model {
namespace {

using Bytes = const unsigned char*;

uint64_t little_endian(Bytes p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kSaturated32 = 0xFFFFFFFF;

struct Directory {
  uint64_t entries = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
};

// The directory as LibTorch's miniz finds it: the zip64 record whenever a zip64 locator precedes
// the end record (even if the end record's own fields are not saturated), else the end record.
// Fuzz finding: a zip64 record with directory offset 2^64-1 passed miniz's overflowing bounds check
// and made LibTorch's VectorReader read before the buffer, so both records are bounds-checked here.
std::optional<Directory> find_directory(Bytes data, uint64_t size, std::string* why) {
  if (size < 22) {
    *why = "too short for a zip file";
    return std::nullopt;
  }
  // The end record sits at the end, before a comment of at most 65535 bytes.
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (uint64_t at = size - 22 + 1; at-- > lowest;) {
    if (little_endian(data + at, 4) != kEndOfDirectory) continue;
    Directory d{little_endian(data + at + 10, 2), little_endian(data + at + 12, 4),
                little_endian(data + at + 16, 4)};
    if (at >= 20 && little_endian(data + at - 20, 4) == kZip64Locator) {
      const uint64_t record = little_endian(data + at - 20 + 8, 8);
      if (size < 56 || record > size - 56 ||
          little_endian(data + record, 4) != kZip64EndOfDirectory) {
        *why = "corrupt zip64 directory record";
        return std::nullopt;
      }
      d = Directory{little_endian(data + record + 32, 8), little_endian(data + record + 40, 8),
                    little_endian(data + record + 48, 8)};
    } else if (d.entries == 0xFFFF || d.size == kSaturated32 || d.offset == kSaturated32) {
      *why = "zip64 directory without its record";
      return std::nullopt;
    }
    if (d.offset > size || d.size > size - d.offset) {
      *why = "zip directory outside the file";
      return std::nullopt;
    }
    return d;
  }
  *why = "no zip directory";
  return std::nullopt;
}

// Saturated 32-bit fields of a directory entry, replaced from its zip64 extra field.
bool read_zip64_extra(Bytes extra, uint64_t length, uint64_t* uncompressed, uint64_t* compressed,
                      uint64_t* offset) {
  for (uint64_t at = 0; at + 4 <= length;) {
    const uint64_t id = little_endian(extra + at, 2);
    const uint64_t n = little_endian(extra + at + 2, 2);
    if (at + 4 + n > length) return false;
    if (id == 0x0001) {
      uint64_t used = 0;
      for (uint64_t* field : {uncompressed, compressed, offset}) {
        if (*field != kSaturated32) continue;
        if (used + 8 > n) return false;
        *field = little_endian(extra + at + 4 + used, 8);
        used += 8;
      }
      return true;
    }
    at += 4 + n;
  }
  return true;
}

// ASCII lower case, as miniz (LibTorch's zip reader) compares names.
std::string folded(const char* name, uint64_t length) {
  std::string out(name, length);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A name from the file as a message may show it: control bytes replaced, at most 80 characters.
std::string printable(const std::string& name) {
  std::string out = name.substr(0, 80);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return name.size() > out.size() ? out + "..." : out;
}

}  // namespace

const ZipRecord* TorchZipIndex::find(const std::string& name) const {
  const std::string full = archive + "/" + name;
  const auto it = records.find(folded(full.data(), full.size()));
  return it == records.end() ? nullptr : &it->second;
}

std::optional<std::string> index_torch_zip(const std::vector<char>& bytes, TorchZipIndex* index) {
  const auto data = reinterpret_cast<Bytes>(bytes.data());
  const uint64_t size = bytes.size();
  std::string why;
  const auto directory = find_directory(data, size, &why);
  if (!directory) return why;
  if (directory->entries == 0) return std::string("zip has no entries");
  uint64_t at = directory->offset;
  TorchZipIndex out;
  for (uint64_t k = 0; k < directory->entries; ++k) {
    if (at > size || size - at < 46 || little_endian(data + at, 4) != kDirectoryEntry) {
      return fmt::format("zip directory entry {} is corrupt", k);
    }
    const uint64_t method = little_endian(data + at + 10, 2);
    uint64_t compressed = little_endian(data + at + 20, 4);
    uint64_t uncompressed = little_endian(data + at + 24, 4);
    const uint64_t name_length = little_endian(data + at + 28, 2);
    const uint64_t extra_length = little_endian(data + at + 30, 2);
    const uint64_t comment_length = little_endian(data + at + 32, 2);
    uint64_t local = little_endian(data + at + 42, 4);
    const uint64_t entry_size = 46 + name_length + extra_length + comment_length;
    if (entry_size > size - at || !read_zip64_extra(data + at + 46 + name_length, extra_length,
                                                    &uncompressed, &compressed, &local)) {
      return fmt::format("zip directory entry {} is corrupt", k);
    }
    if (method != 0 || compressed != uncompressed) {
      return fmt::format("zip entry {} is compressed (torch.save stores its records)", k);
    }
    if (local > size || size - local < 30 || little_endian(data + local, 4) != kLocalHeader) {
      return fmt::format("zip entry {} points outside the file", k);
    }
    const uint64_t start =
        local + 30 + little_endian(data + local + 26, 2) + little_endian(data + local + 28, 2);
    if (start > size || compressed > size - start) {
      return fmt::format("zip entry {} declares {} bytes beyond the end of the file", k,
                         compressed);
    }
    const auto name = reinterpret_cast<const char*>(data + at + 46);
    if (std::memchr(name, '\0', name_length) != nullptr) {
      return fmt::format("zip entry {} has a NUL byte in its name", k);
    }
    if (k == 0) {  // the archive: the first entry's folder, as LibTorch takes it
      const auto slash = static_cast<const char*>(std::memchr(name, '/', name_length));
      if (slash == nullptr) return std::string("the first zip entry is not inside a folder");
      out.archive = folded(name, static_cast<uint64_t>(slash - name));
    }
    if (!out.records.emplace(folded(name, name_length), ZipRecord{start, compressed}).second) {
      return fmt::format("zip holds two entries named {} (readers would take either)",
                         printable(std::string(name, name_length)));
    }
    at += entry_size;
  }
  if (out.find("data.pkl") == nullptr) {
    return fmt::format("no {}/data.pkl record (the archive named by the first zip entry)",
                       printable(out.archive));
  }
  *index = std::move(out);
  return std::nullopt;
}

}  // namespace trainer::model
