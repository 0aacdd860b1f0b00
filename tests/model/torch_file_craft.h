// Hand-made torch.save files for the tests of the reading path (model/torch_save.h): the records
// of a zip read back and written again as a plain zip of stored entries (CRCs right), and the
// pickle of a dict {"w": tensor} whose persistent id and view the test chooses.
//
// Why: a hostile file must be well formed everywhere but in the one place a test aims at, so the
// tests start from the project's own writer (model::torch_save_bytes) and change that place only.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/torch_save.h"

namespace trainer::test {

// (name, data) of each record, in the order of the zip's central directory.
using ZipRecords = std::vector<std::pair<std::string, std::string>>;

inline uint32_t crc32(const std::string& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : data) {
    crc ^= static_cast<unsigned char>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

inline uint64_t read_le(const std::vector<char>& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

inline void put_le(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// The records of a zip whose directory fields are not saturated (no zip64 sizes or offsets).
inline ZipRecords zip_records(const std::vector<char>& zip) {
  size_t end = zip.size() - 22;
  while (read_le(zip, end, 4) != 0x06054b50) --end;
  const uint64_t entries = read_le(zip, end + 10, 2);
  size_t at = read_le(zip, end + 16, 4);
  ZipRecords out;
  for (uint64_t k = 0; k < entries; ++k) {
    const uint64_t size = read_le(zip, at + 20, 4);
    const uint64_t name = read_le(zip, at + 28, 2);
    const uint64_t skip = read_le(zip, at + 30, 2) + read_le(zip, at + 32, 2);
    const uint64_t local = read_le(zip, at + 42, 4);
    if (size == 0xFFFFFFFF || local == 0xFFFFFFFF) throw std::runtime_error("zip64 entry");
    const uint64_t start = local + 30 + read_le(zip, local + 26, 2) + read_le(zip, local + 28, 2);
    out.emplace_back(std::string(zip.data() + at + 46, name),
                     std::string(zip.data() + start, size));
    at += 46 + name + skip;
  }
  return out;
}

// A zip of stored records, in the given order (the central directory lists them in it too).
inline std::vector<char> zip_file(const ZipRecords& records) {
  std::string out;
  std::string directory;
  for (const auto& [name, data] : records) {
    const uint64_t local = out.size();
    std::string common;  // version needed, flags, method, time, date, crc, sizes, name length
    put_le(common, 20, 2);
    put_le(common, 0, 2);
    put_le(common, 0, 2);
    put_le(common, 0, 4);
    put_le(common, crc32(data), 4);
    put_le(common, data.size(), 4);
    put_le(common, data.size(), 4);
    put_le(common, name.size(), 2);
    put_le(common, 0, 2);  // extra length
    put_le(out, 0x04034b50, 4);
    out += common + name + data;
    put_le(directory, 0x02014b50, 4);
    put_le(directory, 20, 2);  // version made by
    directory += common;
    put_le(directory, 0, 2);  // comment length
    put_le(directory, 0, 2);  // disk
    put_le(directory, 0, 2);  // internal attributes
    put_le(directory, 0, 4);  // external attributes
    put_le(directory, local, 4);
    directory += name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 4);  // disk numbers
  put_le(out, records.size(), 2);
  put_le(out, records.size(), 2);
  put_le(out, directory.size(), 4);
  put_le(out, directory_at, 4);
  put_le(out, 0, 2);  // comment length
  return std::vector<char>(out.begin(), out.end());
}

inline std::string& record(ZipRecords& records, const std::string& name) {
  for (auto& [n, data] : records) {
    if (n == name) return data;
  }
  throw std::runtime_error("no record " + name);
}

// The records of {"w": arange(4) as floats} as the project writes it: archive/data/0 (16 bytes)
// first, then archive/data.pkl, archive/version, ...
inline ZipRecords sound_weights_records() {
  c10::Dict<std::string, at::Tensor> dict;
  dict.insert("w", torch::arange(4, torch::kFloat));
  return zip_records(model::torch_save_bytes(c10::IValue(dict)));
}

// Pickle opcodes for small non-negative ints (BININT1, else BININT) and strings (BINUNICODE).
inline std::string pickle_int(int64_t v) {
  std::string out;
  if (v >= 0 && v < 256) {
    out = "K";
    put_le(out, static_cast<uint64_t>(v), 1);
  } else {
    out = "J";
    put_le(out, static_cast<uint64_t>(v), 4);
  }
  return out;
}

inline std::string pickle_string(const std::string& s) {
  std::string out = "X";
  put_le(out, s.size(), 4);
  return out + s;
}

inline std::string pickle_int_tuple(const std::vector<int64_t>& values) {
  std::string out = "(";
  for (const int64_t v : values) out += pickle_int(v);
  return out + "t";
}

// The tensor the dict holds: its storage (persistent id) and its view (_rebuild_tensor_v2 args).
struct CraftedTensor {
  std::string storage_type = "FloatStorage";
  std::string key = "0";
  int64_t numel = 4;
  int64_t offset = 0;
  std::vector<int64_t> sizes{4};
  std::vector<int64_t> strides{1};
};

// The pickle LibTorch's pickler writes for {"w": tensor} (model::torch_save_bytes), without memo.
inline std::string tensor_dict_pickle(const CraftedTensor& t) {
  return std::string("\x80\x02}", 3) + pickle_string("w") +
         "ctorch._utils\n_rebuild_tensor_v2\n((" + pickle_string("storage") + "ctorch\n" +
         t.storage_type + "\n" + pickle_string(t.key) + pickle_string("cpu") + pickle_int(t.numel) +
         "tQ" + pickle_int(t.offset) + pickle_int_tuple(t.sizes) + pickle_int_tuple(t.strides) +
         "\x89" + "ccollections\nOrderedDict\n)Rt" + "Rs.";
}

}  // namespace trainer::test
