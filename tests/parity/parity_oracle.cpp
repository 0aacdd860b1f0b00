#include "parity_oracle.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace fs = std::filesystem;

namespace trainer::test {

std::optional<std::string> oracle_python() {
  static const std::optional<std::string> found = []() -> std::optional<std::string> {
    const std::string python = project_python();
    std::string out;
    const TempDir settings;
    const int rc =
        run_command("YOLO_OFFLINE=1 YOLO_CONFIG_DIR='" + settings.path().string() + "' '" + python +
                        "' -c 'import ultralytics; assert ultralytics.__version__ == "
                        "\"8.4.190\"'",
                    &out);
    if (rc != 0) return std::nullopt;
    return python;
  }();
  return found;
}

std::string run_oracle(const std::string& python, const std::string& args) {
  const TempDir settings;
  const std::string script = std::string(TRAINER_SOURCE_DIR) + "/tests/parity/oracle.py";
  std::string out;
  const int rc =
      run_command("YOLO_OFFLINE=1 YOLO_VERBOSE=False YOLO_CONFIG_DIR='" + settings.path().string() +
                      "' '" + python + "' '" + script + "' " + args,
                  &out);
  CAPTURE(args);
  CAPTURE(out);
  REQUIRE(rc == 0);
  return out;
}

fs::path reference_data_yaml(const fs::path& dir, const std::string& config_name,
                             const fs::path& dataset_root) {
  std::ifstream in(fs::path(TRAINER_SOURCE_DIR) / "configs/data" / config_name);
  REQUIRE(in.good());
  std::ostringstream text;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("path:", 0) == 0) line = "path: " + dataset_root.string();
    text << line << "\n";
  }
  const fs::path file = dir / config_name;
  write_text(file, text.str());
  return file;
}

}  // namespace trainer::test
