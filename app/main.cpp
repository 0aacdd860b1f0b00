// `trainer`: the command-line entry point. Parses flags, sets up logging, dispatches a subcommand,
// and turns errors into a one-line message (usage errors: with the usage) and a non-zero exit code:
// 2 for usage, configuration and input errors, 1 for anything else.
#include <spdlog/spdlog.h>

#include <iostream>
#include <vector>

#include "app/commands.h"
#include "app/usage.h"
#include "core/dist_env.h"
#include "core/error.h"
#include "core/logging.h"

namespace {

// The rank this process runs as under torchrun or trainer's own launcher (0 otherwise, or when
// the variables are malformed: `trainer fit` reports those itself).
int launched_rank() {
  try {
    return trainer::core::read_dist_env().rank;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainer;
  CLI::App cli{"trainer: train YOLO detectors natively (LibTorch)", "trainer"};
  cli.require_subcommand(0, 1);
  app::GlobalOptions global;
  bool show_version = false;
  cli.add_flag("--version", show_version, "print versions of trainer, LibTorch, CUDA, OpenCV");
  cli.add_flag("-v,--verbose", global.verbose, "debug output");
  cli.add_flag("-q,--quiet", global.quiet, "warnings and errors only");

  const std::vector<app::Command> commands = {
      app::register_fit_command(cli, global),     app::register_val_command(cli, global),
      app::register_predict_command(cli, global), app::register_config_command(cli, global),
      app::register_info_command(cli, global),    app::register_data_command(cli, global),
      app::register_eval_command(cli, global),    app::register_bench_command(cli, global),
      app::register_synth_command(cli, global),
  };

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help (and CLI11's other "success" exits) print and exit 0; anything else is a usage error.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return cli.exit(e);
    core::init_console_logging(core::Verbosity::kNormal, launched_rank());
    spdlog::error("{}", app::usage_message(app::usage_error_from_parse(cli, e)));
    return app::kUsageExitStatus;
  }
  core::init_console_logging(global.quiet     ? core::Verbosity::kQuiet
                             : global.verbose ? core::Verbosity::kVerbose
                                              : core::Verbosity::kNormal,
                             launched_rank());
  try {
    if (show_version) {
      app::print_version_report();
      return 0;
    }
    for (const auto& command : commands) {
      if (command.cli->parsed()) return command.run();
    }
    std::cout << cli.help();
    return 0;
  } catch (const app::UsageError& e) {
    spdlog::error("{}", app::usage_message(e));
    return app::kUsageExitStatus;
  } catch (const core::ConfigError& e) {
    spdlog::error("error: {}", e.what());
    return 2;
  } catch (const core::InputError& e) {
    spdlog::error("error: {}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("error: {}", e.what());
    return 1;
  }
}
