// The records of a torch.save file: where each one's bytes lie, found from the zip directory.
//
// Why: torch.save writes a zip of stored (uncompressed) records inside one folder, the archive:
// `<archive>/data.pkl` (the pickle) and `<archive>/data/<key>` (one per storage). Zip readers
// trust the sizes and offsets written in the file (fuzz finding: a zip64 record with directory
// offset 2^64-1 made LibTorch's reader read before its buffer), so the index checks that every
// entry lies inside the file, that none is compressed and that no two names collide when
// compared case-insensitively (as LibTorch's miniz compares them); the restricted unpickler's
// tensors then read their storages straight from the file's bytes (model/torch_file.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace trainer::model {

struct ZipRecord {
  uint64_t start = 0;  // offset of the record's bytes in the file
  uint64_t size = 0;
};

struct TorchZipIndex {
  std::string archive;                                 // ASCII lower case, as every key
  std::unordered_map<std::string, ZipRecord> records;  // by lower-case full name

  // The record `<archive>/<name>` (e.g. "data.pkl", "data/0"), or null.
  const ZipRecord* find(const std::string& name) const;
};

// The first structural problem found, or nullopt with `*index` filled. The archive is the first
// entry's folder, and it must hold a data.pkl.
std::optional<std::string> index_torch_zip(const std::vector<char>& bytes, TorchZipIndex* index);

}  // namespace trainer::model
