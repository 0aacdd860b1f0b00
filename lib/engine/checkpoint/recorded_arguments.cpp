// See recorded_arguments.h.
#include "engine/checkpoint/recorded_arguments.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

namespace trainer::engine {
namespace {

// A reference checkpoint's train_args (a YAML mapping): its data path counts only while it is a
// file here (it was written on another machine).
void read_reference_arguments(const model::ReferenceInfo& info, RecordedArguments& out) {
  if (info.train_args_yaml.empty()) return;
  try {
    const YAML::Node args = YAML::Load(info.train_args_yaml);
    if (const YAML::Node data = args["data"]; data && data.IsScalar()) {
      if (std::filesystem::is_regular_file(data.Scalar())) out.data = data.Scalar();
    }
    if (const YAML::Node imgsz = args["imgsz"]; imgsz && imgsz.IsScalar()) {
      out.imgsz = imgsz.as<int64_t>();
    }
    if (const YAML::Node single = args["single_cls"]; single && single.IsScalar()) {
      out.single_cls = single.as<bool>();
    }
  } catch (const YAML::Exception&) {  // odd train_args: nothing is taken from them
    out = RecordedArguments{};
  }
}

}  // namespace

RecordedArguments recorded_arguments(const WeightsSource& source) {
  RecordedArguments out;
  out.source = source.architecture_source.string();
  if (source.run_config) {
    const core::DataConfig& data = source.run_config->data;
    if (!data.data.empty() && std::filesystem::is_regular_file(data.data)) out.data = data.data;
    out.imgsz = data.imgsz;
    out.single_cls = data.single_cls;
  } else if (source.reference) {
    read_reference_arguments(*source.reference, out);
  }
  return out;
}

std::vector<std::string> adopt_recorded_arguments(const RecordedArguments& recorded,
                                                  const std::set<std::string>& given,
                                                  core::TrainConfig& config) {
  std::vector<std::string> taken;
  if (!given.count("data") && !recorded.data.empty() && recorded.data != config.data.data) {
    config.data.data = recorded.data;
    taken.push_back("data=" + recorded.data);
  }
  if (!given.count("imgsz") && recorded.imgsz && *recorded.imgsz != config.data.imgsz) {
    config.data.imgsz = *recorded.imgsz;
    taken.push_back("imgsz=" + std::to_string(*recorded.imgsz));
  }
  if (!given.count("single_cls") && recorded.single_cls &&
      *recorded.single_cls != config.data.single_cls) {
    config.data.single_cls = *recorded.single_cls;
    taken.push_back(std::string("single_cls=") + (*recorded.single_cls ? "true" : "false"));
  }
  return taken;
}

}  // namespace trainer::engine
