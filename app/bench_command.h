// `trainer bench <what>`: every benchmark is a subcommand that prints JSON on stdout.
// Each lives in its own app/bench_*_command.cpp and registers itself in bench_command.cpp's list.
#pragma once

#include "app/commands.h"

namespace trainer::app {

// Each `trainer bench <what>` declares its registrar here, e.g.
// Command register_bench_optim_command(CLI::App& bench, const GlobalOptions& global);
Command register_bench_abba_command(CLI::App& bench, const GlobalOptions& global);
Command register_bench_data_command(CLI::App& bench, const GlobalOptions& global);
Command register_bench_fit_command(CLI::App& bench, const GlobalOptions& global);
Command register_bench_interval_command(CLI::App& bench, const GlobalOptions& global);
Command register_bench_optim_command(CLI::App& bench, const GlobalOptions& global);
Command register_bench_precision_command(CLI::App& bench, const GlobalOptions& global);

}  // namespace trainer::app
