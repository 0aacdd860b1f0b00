// See atomic_file.h.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/fault_hooks.h"

namespace trainer::core {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // best effort: some filesystems do not allow opening directories
  ::fsync(fd);
  ::close(fd);
}

// The process's umask. umask(2) can only be read by setting it, which races with any other thread
// creating a file meanwhile (its file would get the temporary mask), so Linux's /proc/self/status
// "Umask:" line (kernel 4.7+) comes first; elsewhere a round trip under a lock (which orders our
// own callers, not foreign threads calling umask).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) != 0) continue;
    try {
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8) & 0777);
    } catch (const std::exception&) {
      break;
    }
  }
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// The mode the new version gets: an existing target's permission bits (a rewrite must not undo
// the user's chmod), else what open(2) would give a new file, 0666 less the umask.
mode_t mode_for(const std::filesystem::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 0777;
  return 0666 & ~current_umask();
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view content,
                           Durability durability) {
  // A unique temporary name beside the target (two writers of one file never share it), created
  // close-on-exec; the descriptor is closed on every path.
  std::string pattern = target.string() + ".tmp.XXXXXX";
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  const std::filesystem::path tmp = pattern;
  if (fd < 0) fail("cannot create", tmp);
  auto abandon = [&](const char* what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = saved;
    fail(what, tmp);
  };
  if (::fchmod(fd, mode_for(target)) != 0) abandon("cannot set the mode of");
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("cannot write");
    }
    written += static_cast<size_t>(n);
  }
  if (durability == Durability::kFlushed && ::fsync(fd) != 0) abandon("cannot flush");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot close", tmp);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename into", target);
  }
  if (durability == Durability::kFlushed) fsync_directory(target.parent_path());
  exit_if_fault_after_rename(target);  // tests only (core/fault_hooks.h)
}

std::vector<std::filesystem::path> remove_stale_temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t at = name.rfind(".tmp.");
    // mkostemp's pattern: exactly six characters after ".tmp.", and a target name before it.
    if (at == std::string::npos || at == 0 || name.size() != at + 5 + 6) continue;
    if (!entry.is_regular_file(ec)) continue;
    if (std::filesystem::remove(entry.path(), ec)) removed.push_back(entry.path());
  }
  return removed;
}

}  // namespace trainer::core
