// Fuzz target: predict's .txt source lists, parsed and then resolved inside a small fixed folder.
//
// Why: a list is a user's text naming paths, folders and globs; a line that names nothing usable
// must give core::InputError naming the list and line, never a crash or a filesystem exception.
// Parsing: entries in line order, none blank or ending in whitespace, none with a NUL. Resolving:
// the entries that stay inside the fixture (relative, no "..") go into a list there, and every file
// resolve_source() returns is an image or video under the fixture.
#include <stdlib.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "fuzz/fuzz_support.h"
#include "predict/source.h"

namespace fs = std::filesystem;

namespace {

// imgs/ (two images of mixed-case suffixes, a video, a note, a sub-folder), a folder named with
// glob characters, and a nested list; removed at exit.
class Fixture {
 public:
  Fixture() {
    std::string pattern = (fs::temp_directory_path() / "fuzz_predict_sources.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    root_ = pattern;
    for (const char* file : {"imgs/a.jpg", "imgs/b.PNG", "imgs/clip.avi", "imgs/notes.md",
                             "imgs/sub/c.jpg", "set[1]/d.jpg", "nested.txt"}) {
      fs::create_directories((root_ / file).parent_path());
      std::ofstream(root_ / file) << "imgs/a.jpg\n";
    }
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

bool stays_inside(const std::string& path) {
  return !path.empty() && path[0] != '/' && path.find("..") == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture;
  const std::string text = trainer::fuzz::as_text(data, size);
  std::vector<trainer::predict::SourceListEntry> entries;
  try {
    entries = trainer::predict::parse_source_list(text, "fuzz.txt");
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
    FUZZ_CHECK(text.find('\0') != std::string::npos);
    return 0;
  }
  int previous_line = 0;
  std::string list;
  for (const auto& entry : entries) {
    FUZZ_CHECK(entry.line > previous_line);
    previous_line = entry.line;
    FUZZ_CHECK(!entry.path.empty());
    FUZZ_CHECK(!std::isspace(static_cast<unsigned char>(entry.path.back())));
    FUZZ_CHECK(entry.path.find('\0') == std::string::npos);
    if (stays_inside(entry.path)) list += entry.path + "\n";
  }
  const fs::path list_file = fixture.root() / "list.txt";
  std::ofstream(list_file, std::ios::binary | std::ios::trunc) << list;
  try {
    const auto files = trainer::predict::resolve_source(list_file.string());
    const std::string root = fixture.root().string() + "/";
    for (const auto& f : files) {
      FUZZ_CHECK(f.path.string().rfind(root, 0) == 0);
      FUZZ_CHECK(fs::is_regular_file(f.path));
      FUZZ_CHECK(f.path.extension() != ".txt" && f.path.extension() != ".md");
    }
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
