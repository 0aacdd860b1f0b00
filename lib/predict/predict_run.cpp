// See predict_run.h.
// Tested by tests/integration/test_cli_predict.cpp: trainer predict on image/folder/glob/txt/video:
//   console lines, annotated copies, labels, predictions.json, frame numbering.
#include "predict/predict_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>
#include <ostream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/run_dir.h"
#include "data/coco_json.h"
#include "data/image_codec.h"
#include "data/image_io.h"
#include "engine/checkpoint/model_from_weights.h"
#include "engine/device/device.h"
#include "eval/coco_results.h"
#include "predict/output_names.h"
#include "predict/predict_output.h"
#include "predict/source.h"
#include "predict/task_output.h"
#include "predict/video.h"

namespace trainer::predict {
namespace fs = std::filesystem;
namespace {

// One decoded input waiting for its batch: an image file or a video frame.
struct Pending {
  cv::Mat image;
  fs::path path;
  size_t source_index = 0;
  int64_t frame = 0;  // video frames: 1-based; 0 for images
  int64_t frame_count = 0;
  std::shared_ptr<VideoWriter> writer;  // video frames when saving
};

class Session {
 public:
  Session(const PredictOptions& options, std::ostream& out) : options_(options), out_(out) {}

  PredictSummary run() {
    const std::vector<SourceFile> sources = resolve_source(options_.source);
    stems_ = output_stems(sources);
    auto loaded = engine::load_model_from_weights(options_.weights, options_.model, options_.data);
    names_ = loaded.dataset.names;
    if (!options_.imgsz_given && loaded.recorded.imgsz &&
        *loaded.recorded.imgsz != options_.imgsz) {
      options_.imgsz = static_cast<int>(*loaded.recorded.imgsz);  // as the reference: the run's
      spdlog::info("imgsz {} (from {})", options_.imgsz, loaded.recorded.source);
    }
    const int nc = static_cast<int>(names_.size());
    for (int c = 0; c < nc; ++c) {
      category_ids_.push_back(nc == 80 ? data::coco80_to_coco91()[c] : c + 1);
    }
    const auto device = engine::resolve_device(options_.device);
    engine::use_device(device);
    model_ = engine::inference_copy(*loaded.model, device, options_.nms != NmsChoice::kOff);
    loaded.model = nullptr;  // only the fused copy stays in memory
    predictor_ = std::make_unique<Predictor>(*model_, options_, device);

    core::RunConfig run;
    run.task = loaded.name.task;
    run.project = options_.project;
    run.name = options_.name;
    run.exist_ok = options_.exist_ok;
    core::ClaimedRunDir claim(run);  // given back if nothing could be predicted
    summary_.save_dir = claim.path();
    // Refused here, before anything is written: a folder that holds a source already existed.
    if (options_.save) check_outputs_spare_sources(sources, stems_, summary_.save_dir);
    if (options_.save_txt) fs::create_directories(summary_.save_dir / "labels");

    total_ = sources.size();
    for (size_t s = 0; s < sources.size(); ++s) {
      if (sources[s].kind == SourceKind::kImage) {
        add_image(sources[s].path, s, sources.size() == 1);
      } else {
        add_video(sources[s].path, s);
      }
    }
    flush();
    if (summary_.images == 0) {
      throw core::InputError("source " + options_.source + ": no image could be read");
    }
    if (options_.save_json) {
      eval::write_coco_results(detections_, summary_.save_dir / "predictions.json",
                               {/*file_name=*/true});
    }
    claim.keep();
    const Timing& t = summary_.timing;
    const double n = static_cast<double>(summary_.images);
    out_ << fmt::format(
        "Speed: {:.1f}ms preprocess, {:.1f}ms inference, {:.1f}ms postprocess per image at shape "
        "({}, 3, {}, {})\n",
        t.preprocess_ms / n, t.inference_ms / n, t.postprocess_ms / n,
        std::min<int64_t>(options_.batch, summary_.images), last_height_, last_width_);
    out_ << "Results saved to " << summary_.save_dir.string() << "\n";
    if (options_.save_txt) {
      out_ << summary_.labels << " label" << (summary_.labels == 1 ? "" : "s") << " saved to "
           << (summary_.save_dir / "labels").string() << "\n";
    }
    return summary_;
  }

 private:
  void add_image(const fs::path& path, size_t index, bool only_source) {
    Pending p;
    try {
      p.image = data::read_image_bgr(path);
    } catch (const core::InputError& e) {
      if (only_source) throw;
      spdlog::warn("skipping {}: {}", path.string(), e.what());
      ++summary_.skipped;
      return;
    }
    p.path = path;
    p.source_index = index;
    enqueue(std::move(p));
  }

  void add_video(const fs::path& path, size_t index) {
    VideoReader reader(path, options_.vid_stride);
    std::shared_ptr<VideoWriter> writer;
    if (options_.save) {
      writer = std::make_shared<VideoWriter>(
          annotated_output({path, SourceKind::kVideo}, stems_[index], summary_.save_dir),
          reader.fps() / options_.vid_stride);
    }
    cv::Mat frame;
    while (reader.next(frame)) {
      Pending p;
      p.image = frame.clone();
      p.path = path;
      p.source_index = index;
      p.frame = reader.frame_index();
      p.frame_count = reader.frame_count();
      p.writer = writer;
      enqueue(std::move(p));
    }
    flush();  // the writer's frames in order before the next source
    if (writer) writer->finish();
  }

  void enqueue(Pending p) {
    pending_.push_back(std::move(p));
    if (static_cast<int64_t>(pending_.size()) >= options_.batch) flush();
  }

  void flush() {
    if (pending_.empty()) return;
    std::vector<cv::Mat> images;
    for (const auto& p : pending_) images.push_back(p.image);
    Timing batch;
    const auto results = predictor_->run(images, batch);
    summary_.timing.preprocess_ms += batch.preprocess_ms;
    summary_.timing.inference_ms += batch.inference_ms;
    summary_.timing.postprocess_ms += batch.postprocess_ms;
    const double per_image_ms = batch.inference_ms / static_cast<double>(pending_.size());
    for (size_t i = 0; i < pending_.size(); ++i) write(pending_[i], results[i], per_image_ms);
    pending_.clear();
  }

  void write(const Pending& p, const ImagePrediction& r, double inference_ms) {
    ++summary_.images;
    last_height_ = r.input_height;
    last_width_ = r.input_width;
    const std::string where =
        p.frame > 0 ? fmt::format("video {}/{} (frame {}/{}) {}", p.source_index + 1, total_,
                                  p.frame, p.frame_count, p.path.string())
                    : fmt::format("image {}/{} {}", p.source_index + 1, total_, p.path.string());
    out_ << fmt::format("{}: {}x{} {}{:.1f}ms\n", where, r.input_height, r.input_width,
                        summary(r, names_), inference_ms);
    const std::string& stem = stems_[p.source_index];  // unique among the sources
    const std::string base = p.frame > 0 ? fmt::format("{}_{}", stem, p.frame) : stem;
    if (options_.save) {
      const cv::Mat annotated =
          predictor_->output().annotate(p.image, r, names_, options_.line_width);
      if (p.writer) {
        p.writer->write(annotated);
      } else {
        data::write_image(annotated_output({p.path, SourceKind::kImage}, stem, summary_.save_dir),
                          annotated, 95);
      }
    }
    if (options_.save_txt) {
      const std::string text =
          predictor_->output().yolo_txt(r, p.image.rows, p.image.cols, options_.save_conf);
      if (!text.empty()) {
        core::write_file_atomically(summary_.save_dir / "labels" / (base + ".txt"), text);
        ++summary_.labels;
      }
    }
    if (options_.save_json) {
      // One numbering with the labels: a frame's image_id is its frame number from 1 (as in
      // labels/<stem>_<frame>.txt and the log), and file_name tells the sources apart.
      const std::string file = p.frame > 0 ? base : stem + p.path.extension().string();
      const int64_t id =
          p.frame > 0 ? p.frame : image_id_for(file, static_cast<int64_t>(p.source_index));
      auto entries = predictor_->output().coco_detections(r, id, category_ids_);
      for (auto& entry : entries) entry.file_name = file;
      detections_.insert(detections_.end(), entries.begin(), entries.end());
    }
  }

  PredictOptions options_;  // with the weights' imgsz when none was given
  std::ostream& out_;
  std::vector<std::string> names_;
  std::vector<int64_t> category_ids_;
  std::vector<std::string> stems_;  // output stem per source (output_names.h)
  model::YoloModel model_{nullptr};
  std::unique_ptr<Predictor> predictor_;
  PredictSummary summary_;
  std::vector<Pending> pending_;
  std::vector<eval::Detection> detections_;
  size_t total_ = 0;
  int last_height_ = 0, last_width_ = 0;
};

}  // namespace

PredictSummary run_predict(const PredictOptions& options, std::ostream& out) {
  return Session(options, out).run();
}

}  // namespace trainer::predict
