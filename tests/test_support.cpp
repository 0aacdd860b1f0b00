#include "test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainer::test {

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path candidate = fs::temp_directory_path() / ("trainer-test-" + std::to_string(::getpid()) +
                                                      "-" + std::to_string(rd()));
    if (fs::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_text(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<fs::path> shared_data(const std::string& subset) {
  const char* env = std::getenv("TRAINER_SHARED_DATA");
  const fs::path root =
      env && *env ? fs::path(env) : fs::path(TRAINER_SOURCE_DIR) / "../shared/data";
  if (fs::is_directory(root / subset)) return fs::absolute(root / subset).lexically_normal();
  return std::nullopt;
}

std::string project_python() {
  if (const char* env = std::getenv("TRAINER_PYTHON"); env && *env) return env;
  const char* cache = std::getenv("TRAINER_CACHE");
  const char* home = std::getenv("HOME");
  const fs::path root =
      cache && *cache ? fs::path(cache) : fs::path(home ? home : "/root") / ".cache/trainer";
  return (root / "venv/bin/python").string();
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

int run_command(const std::string& command, std::string* output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer{};
  std::string text;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace trainer::test
