// The subcommands of the `trainer` CLI; each lives in its own file and only wires lib/ calls.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace trainer::app {

// Global flags shared by all subcommands.
struct GlobalOptions {
  bool verbose = false;
  bool quiet = false;
};

// A registered subcommand and the action to run when the user selected it.
struct Command {
  CLI::App* cli = nullptr;
  std::function<int()> run;
};

Command register_config_command(CLI::App& app, const GlobalOptions& global);
Command register_info_command(CLI::App& app, const GlobalOptions& global);
Command register_data_command(CLI::App& app, const GlobalOptions& global);
Command register_eval_command(CLI::App& app, const GlobalOptions& global);
Command register_bench_command(CLI::App& app, const GlobalOptions& global);
Command register_synth_command(CLI::App& app, const GlobalOptions& global);
Command register_fit_command(CLI::App& app, const GlobalOptions& global);
Command register_val_command(CLI::App& app, const GlobalOptions& global);
Command register_predict_command(CLI::App& app, const GlobalOptions& global);

// `trainer --version`: prints the version report.
void print_version_report();

}  // namespace trainer::app
