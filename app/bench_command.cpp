// `trainer bench`: the parent of the benchmark subcommands (see bench_command.h).
#include "app/bench_command.h"

#include <vector>

namespace trainer::app {

Command register_bench_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* bench = app.add_subcommand("bench", "benchmarks (JSON on stdout; see BENCHMARKS.md)");
  bench->require_subcommand(1);
  // One line per benchmark (keep alphabetical).
  auto commands = std::make_shared<std::vector<Command>>(std::vector<Command>{
      register_bench_abba_command(*bench, global),
      register_bench_data_command(*bench, global),
      register_bench_fit_command(*bench, global),
      register_bench_interval_command(*bench, global),
      register_bench_optim_command(*bench, global),
      register_bench_precision_command(*bench, global),
  });
  return {bench, [commands] {
            for (const auto& command : *commands) {
              if (command.cli->parsed()) return command.run();
            }
            return 2;
          }};
}

}  // namespace trainer::app
