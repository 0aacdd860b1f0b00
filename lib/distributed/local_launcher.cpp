// Tested by tests/distributed/test_group.cpp: listen_on_loopback socket taken by rank 0's store
//   (loopback only), free_local_port; launch_local_ranks only via scripts/ddp_test.sh.
// See local_launcher.h. A child that loses its launcher (the launcher killed with SIGKILL) gets
// SIGTERM from the kernel (PR_SET_PDEATHSIG), so no rank outlives the job.
#include "distributed/local_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

namespace trainer::distributed {
namespace {

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "stopped";
}

pid_t start_rank(const std::vector<std::string>& argv, int rank, int nproc, int port,
                 int store_fd) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid > 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (rank == 0) {  // rank 0 hosts the store on the launcher's loopback socket (kept over exec)
    ::fcntl(store_fd, F_SETFD, 0);
    ::setenv(kStoreListenFdVariable, std::to_string(store_fd).c_str(), 1);
  } else {
    ::unsetenv(kStoreListenFdVariable);  // the socket itself closes on exec
  }
  const std::string r = std::to_string(rank), n = std::to_string(nproc);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("GROUP_RANK", "0", 1);
  ::setenv("WORLD_SIZE", n.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  if (::getenv("OMP_NUM_THREADS") == nullptr) {  // as torchrun: the cores are shared by N ranks
    const unsigned cores = std::thread::hardware_concurrency();
    const unsigned per_rank = std::max(1u, cores / static_cast<unsigned>(nproc));
    ::setenv("OMP_NUM_THREADS", std::to_string(per_rank).c_str(), 1);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv("/proc/self/exe", args.data());
  std::fprintf(stderr, "rank %d: cannot start %s: %s\n", rank, argv[0].c_str(),
               std::strerror(errno));
  ::_exit(127);
}

}  // namespace

int listen_on_loopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("cannot open a socket for the rendezvous store");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, SOMAXCONN) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot listen on a loopback port for the rendezvous "
                    "store: {}",
                    std::strerror(err)));
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

int free_local_port() {
  int port = 0;
  ::close(listen_on_loopback(&port));
  return port;
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      argv.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) argv.push_back(cur);
  return argv;
}

int launch_local_ranks(const std::vector<std::string>& argv, int nproc) {
  int port = 0;
  const int store_fd = listen_on_loopback(&port);
  spdlog::info("starting {} ranks on this machine (MASTER_ADDR=127.0.0.1 MASTER_PORT={})", nproc,
               port);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  ::sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);

  std::vector<pid_t> pids;
  for (int r = 0; r < nproc; ++r) pids.push_back(start_rank(argv, r, nproc, port, store_fd));
  ::close(store_fd);  // rank 0 holds it now
  std::vector<bool> running(static_cast<size_t>(nproc), true);
  int alive = nproc;
  int result = 0;
  bool stopping = false;
  std::chrono::steady_clock::time_point stop_sent;
  const auto stop_all = [&](int sig) {
    for (int r = 0; r < nproc; ++r) {
      if (running[static_cast<size_t>(r)]) ::kill(pids[static_cast<size_t>(r)], sig);
    }
  };
  while (alive > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < nproc; ++r) {
        if (pids[static_cast<size_t>(r)] != pid || !running[static_cast<size_t>(r)]) continue;
        running[static_cast<size_t>(r)] = false;
        --alive;
        const int code = exit_status(status);
        if (code != 0 && !stopping) {
          spdlog::error("rank {} (pid {}) {}: stopping the other ranks", r, pid, describe(status));
          result = code;
          stopping = true;
          stop_sent = std::chrono::steady_clock::now();
          stop_all(SIGTERM);
        }
      }
      continue;
    }
    if (g_stop_signal != 0 && !stopping) {
      spdlog::warn("signal {}: stopping all ranks", static_cast<int>(g_stop_signal));
      result = 128 + g_stop_signal;
      stopping = true;
      stop_sent = std::chrono::steady_clock::now();
      stop_all(SIGTERM);
    }
    if (stopping && std::chrono::steady_clock::now() - stop_sent > std::chrono::seconds(15)) {
      stop_all(SIGKILL);  // a rank stuck past SIGTERM
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return result;
}

}  // namespace trainer::distributed
