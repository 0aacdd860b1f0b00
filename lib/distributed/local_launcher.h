// `trainer fit ... device=0,1,2,3`: one machine, N ranks started by trainer itself (the
// reference does the same with `device=0,1`), as torchrun would start them.
//
// Why here and not only torchrun: users of the reference expect a device list to just work. The
// launcher re-runs this program with the same arguments and torchrun's variables (RANK,
// LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port), waits
// for every rank, and when one rank fails (or Ctrl-C / SIGTERM arrives) stops all the others, so
// no rank is left waiting on a dead peer. Rank 0's rendezvous store is reachable from this
// machine only: the launcher binds its listening socket on 127.0.0.1 and hands that socket to
// rank 0 (kStoreListenFdVariable), so the store never listens on other interfaces and no other
// program can take the port between choosing and binding it.
#pragma once

#include <string>
#include <vector>

namespace trainer::distributed {

// A free TCP port on the loopback interface (bound, read and released: another program may take
// it before it is bound again; the launcher itself uses listen_on_loopback()).
int free_local_port();

// A listening TCP socket on 127.0.0.1 at a port the kernel picks (close-on-exec); sets *port.
// Throws std::runtime_error when no socket can be made.
int listen_on_loopback(int* port);

// The variable that hands rank 0 the store's listening socket (a file descriptor number).
inline constexpr const char* kStoreListenFdVariable = "TRAINER_STORE_LISTEN_FD";

// Starts `nproc` ranks of `argv` (argv[0] is replaced by this executable) and waits. Returns 0
// when all ranks succeed, else the first failing rank's exit status (128 + signal for a signal).
int launch_local_ranks(const std::vector<std::string>& argv, int nproc);

// This process's own command line (argv), as the kernel holds it.
std::vector<std::string> own_command_line();

}  // namespace trainer::distributed
