// See run_lock.h.
#include "core/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.h"

namespace trainer::core {
namespace {

std::string read_all(int fd) {
  std::string text;
  char buffer[256];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > 4096) break;  // a holder line is short; never read a huge file whole
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

std::string this_holder() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown-host");
  return std::string(host) + " " + std::to_string(::getpid());
}

}  // namespace

RunLock::RunLock(const std::filesystem::path& run_dir) : file_(run_dir / kFileName) {
  // A holder removes the file before it lets go, so a lock taken on a file that is no longer the
  // one under the name (removed, or replaced, in between) is retried on the new file.
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw InputError("cannot create the run lock " + file_.string() + ": " +
                       std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = read_all(fd_);
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK) {
        throw InputError(
            "run folder " + run_dir.string() + " is in use by a live run (" +
            (holder.empty() ? std::string("holder unknown") : "host and pid: " + holder) +
            "); wait for it to finish, or pick another name (name=..., or exist_ok=false)");
      }
      throw InputError("cannot lock " + file_.string() + ": " + std::strerror(err));
    }
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(file_.c_str(), &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      stale_holder_ = read_all(fd_);
      const std::string line = this_holder() + "\n";
      if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) < 0) {
        // The lock itself is held; only the holder's name for messages is missing.
      }
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw InputError("cannot lock " + file_.string() + ": it keeps being replaced");
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  ::unlink(file_.c_str());  // while still held: nobody can take a lock on the removed file
  ::close(fd_);
}

}  // namespace trainer::core
