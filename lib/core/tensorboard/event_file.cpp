// See event_file.h.
// Tested by tests/core/test_tensorboard_reader.cpp: EventFileWriter file read back by TensorBoard
//   EventAccumulator (skips without python tensorboard).
#include "core/tensorboard/event_file.h"

#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "core/tensorboard/record.h"

namespace trainer::core::tensorboard {

std::string event_file_name(int64_t unix_seconds) {
  char host[256] = {};
  std::string name = "localhost";
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') name = host;
  return "events.out.tfevents." + std::to_string(unix_seconds) + "." + name;
}

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

EventFileWriter::EventFileWriter(const std::filesystem::path& dir) {
  const double now = wall_time_now();
  path_ = dir / event_file_name(static_cast<int64_t>(now));
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw std::runtime_error("cannot open TensorBoard event file " + path_.string());
  append(encode_file_version_event(now));
}

void EventFileWriter::write(int64_t step, const std::vector<ScalarValue>& scalars,
                            const std::vector<ImageValue>& images) {
  append(encode_summary_event(wall_time_now(), step, scalars, images));
}

void EventFileWriter::append(const std::string& event) {
  const std::string record = frame_record(event);
  out_.write(record.data(), static_cast<std::streamsize>(record.size()));
  out_.flush();
  if (!out_) throw std::runtime_error("cannot write TensorBoard event file " + path_.string());
}

}  // namespace trainer::core::tensorboard
