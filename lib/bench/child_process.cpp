// See child_process.h.
// Tested by tests/bench/test_process_arms.cpp: run_child exit status/signal/stdout/rss,
//   describe_command quoting, self_executable.
#include "bench/child_process.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace trainer::bench {

std::string self_executable() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

std::string describe_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos;
    if (plain) {
      out += arg;
    } else {
      out += '\'';
      for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

ChildResult run_child(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::runtime_error("run_child: empty command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];  // closed on exec; carries errno when exec fails
  if (::pipe(out_pipe) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("run_child: pipe: ") + std::strerror(errno));
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("run_child: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[0]);
    ::execv(args[0], args.data());
    const int error = errno;
    [[maybe_unused]] const auto written = ::write(err_pipe[1], &error, sizeof(error));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ChildResult result;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(out_pipe[0], buffer, sizeof(buffer));
    if (n > 0) {
      result.stdout_text.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(out_pipe[0]);
  int exec_error = 0;
  const bool exec_failed = ::read(err_pipe[0], &exec_error, sizeof(exec_error)) ==
                           static_cast<ssize_t>(sizeof(exec_error));
  ::close(err_pipe[0]);

  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error(std::string("run_child: wait: ") + std::strerror(errno));
    }
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (exec_failed) {
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(exec_error));
  }
  result.max_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace trainer::bench
