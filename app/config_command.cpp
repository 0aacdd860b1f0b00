// `trainer config [CONFIG] [key=value ...]`: prints the resolved configuration as a table, checks
// the dataset and model it names, and optionally writes it back as YAML (`--output`).
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/config_args.h"
#include "core/config_loader.h"
#include "core/config_schema.h"
#include "core/config_writer.h"
#include "data/dataset_yaml.h"
#include "engine/checkpoint/model_source.h"
#include "model/model_name.h"

namespace trainer::app {
namespace {

struct ConfigOptions {
  std::vector<std::string> args;  // CONFIG (first item without '=') then key=value overrides
  std::string output;
  bool keys = false;
};

void print_keys() {
  const core::TrainConfig defaults;
  for (const auto& f : core::config_fields()) {
    std::cout << f.key << "  [" << f.section << "]  default " << core::format_value(f.get(defaults))
              << "  (" << f.expectation() << ")" << (f.alias ? "  alias" : "") << "\n    " << f.help
              << "\n";
  }
}

int run_config(const ConfigOptions& opts) {
  if (opts.keys) {
    print_keys();
    return 0;
  }
  const auto [file, overrides] = split_config_args(opts.args);
  const core::LoadedConfig loaded = core::load_config(file, overrides);
  for (const auto& note : loaded.notes) spdlog::info("{}: {}", note.where.describe(), note.message);
  const auto model = engine::resolve_model_source(loaded.config).name;
  std::cout << "config: " << (file.empty() ? std::string("(defaults)") : file);
  if (loaded.files.size() > 1) {
    std::cout << " (extends";
    for (size_t i = 0; i + 1 < loaded.files.size(); ++i)
      std::cout << " " << loaded.files[i].string();
    std::cout << ")";
  }
  std::cout << "\nmodel: " << model.display() << "\n";
  if (!loaded.config.data.data.empty()) {
    const auto ds = data::load_dataset_yaml(loaded.config.data.data);
    std::cout << "dataset: " << ds.yaml_file.string() << " (" << ds.nc() << " classes, root "
              << ds.root.string() << ")\n";
  }
  std::cout << core::config_table(loaded.config);
  if (!opts.output.empty()) {
    core::write_config_yaml(loaded.config, opts.output);
    std::cout << "wrote " << opts.output << "\n";
  }
  return 0;
}

}  // namespace

Command register_config_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<ConfigOptions>();
  CLI::App* cmd = app.add_subcommand("config", "print the resolved configuration");
  cmd->add_option("args", opts->args, "CONFIG file, then key=value overrides");
  cmd->add_option("-o,--output", opts->output, "also write the resolved config as YAML");
  cmd->add_flag("--keys", opts->keys, "list every key with its default and allowed values");
  return {cmd, [opts] { return run_config(*opts); }};
}

}  // namespace trainer::app
