// See output_names.h.
#include "predict/output_names.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <map>
#include <set>
#include <utility>

#include "core/error.h"

namespace trainer::predict {
namespace fs = std::filesystem;
namespace {

// "<prefix>_<frame>" (frame a whole number from 1, as a video's frame labels are numbered): the
// prefix, else "".
std::string frame_label_prefix(const std::string& stem) {
  const size_t at = stem.rfind('_');
  if (at == std::string::npos || at == 0 || at + 1 >= stem.size() || stem[at + 1] == '0') return "";
  for (size_t i = at + 1; i < stem.size(); ++i) {
    if (stem[i] < '0' || stem[i] > '9') return "";
  }
  return stem.substr(0, at);
}

class StemClaims {
 public:
  bool is_free(const std::string& stem, SourceKind kind) const {
    if (all_.count(stem)) return false;
    if (kind == SourceKind::kVideo) return image_frame_prefixes_.count(stem) == 0;
    const std::string prefix = frame_label_prefix(stem);
    return prefix.empty() || videos_.count(prefix) == 0;
  }
  void claim(const std::string& stem, SourceKind kind) {
    all_.insert(stem);
    if (kind == SourceKind::kVideo) {
      videos_.insert(stem);
    } else {
      const std::string prefix = frame_label_prefix(stem);
      if (!prefix.empty()) image_frame_prefixes_.insert(prefix);
    }
  }

 private:
  std::set<std::string> all_, videos_, image_frame_prefixes_;
};

using FileId = std::pair<dev_t, ino_t>;

bool file_id(const fs::path& file, FileId* id) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return false;
  *id = {st.st_dev, st.st_ino};
  return true;
}

}  // namespace

std::vector<std::string> output_stems(const std::vector<SourceFile>& sources) {
  StemClaims claims;
  std::vector<std::string> out;
  out.reserve(sources.size());
  for (const SourceFile& source : sources) {
    const std::string stem = source.path.stem().string();
    std::string candidate = stem;
    for (int k = 2; !claims.is_free(candidate, source.kind); ++k) {
      candidate = fmt::format("{}_{}", stem, k);
    }
    claims.claim(candidate, source.kind);
    out.push_back(candidate);
  }
  return out;
}

fs::path annotated_output(const SourceFile& source, const std::string& stem,
                          const fs::path& save_dir) {
  if (source.kind == SourceKind::kVideo) return save_dir / (stem + ".mp4");
  return save_dir / (stem + source.path.extension().string());
}

void check_outputs_spare_sources(const std::vector<SourceFile>& sources,
                                 const std::vector<std::string>& stems, const fs::path& save_dir) {
  std::map<FileId, size_t> source_of;
  for (size_t i = 0; i < sources.size(); ++i) {
    FileId id;
    if (file_id(sources[i].path, &id)) source_of.emplace(id, i);
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    const fs::path output = annotated_output(sources[i], stems[i], save_dir);
    FileId id;
    if (!file_id(output, &id)) continue;  // not there yet, so not a source
    const auto hit = source_of.find(id);
    if (hit == source_of.end()) continue;
    throw core::ConfigError(fmt::format(
        "predict would write {} over the source {}: the run folder {} holds the sources; choose "
        "another project= or name= (or save=false)",
        output.string(), sources[hit->second].path.string(), save_dir.string()));
  }
}

}  // namespace trainer::predict
