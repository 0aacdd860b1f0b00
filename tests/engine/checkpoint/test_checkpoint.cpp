// Checkpoints: round trip, atomic replacement, and clear errors for broken or foreign files.
#include <ATen/CPUGeneratorImpl.h>
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/error.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/trainer.h"
#include "model/torch_file_craft.h"
#include "test_support.h"

using namespace trainer::engine;

namespace {

Checkpoint sample(double scale) {
  Checkpoint c;
  c.config_yaml = "model: yolo26n\nepochs: 3\n";
  c.epoch = 1;
  c.iteration = 42;
  c.last_opt_step = 40;
  c.best_fitness = 0.25 * scale;
  c.best_epoch = 1;
  c.loss_updates = 2;
  c.optimizer_name = "MuSGD";
  c.world_size = 2;
  c.precision = "bf16";
  c.model["model.0.conv.weight"] = torch::arange(24, torch::kFloat).reshape({2, 3, 2, 2}) * scale;
  c.model["model.0.bn.num_batches_tracked"] = torch::tensor(int64_t{7});
  c.ema["ema.model.0.conv.weight"] = torch::ones({2, 3, 2, 2});
  c.ema["ema.updates"] = torch::tensor(int64_t{40});
  c.optimizer["g0.p0.muon_momentum"] = torch::full({2, 2}, 0.5 * scale, torch::kFloat64);
  c.rng_cpu = at::detail::getDefaultCPUGenerator().get_state();
  c.date = "2026-11-29T12:00:00";
  return c;
}

bool equal_maps(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || !torch::equal(v, it->second) || v.dtype() != it->second.dtype())
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("checkpoint: every field survives a round trip bit for bit") {
  trainer::test::TempDir dir;
  const auto file = dir.path() / "weights" / "last.ckpt";
  const Checkpoint written = sample(1.0);
  save_checkpoint(written, file);
  const Checkpoint read = load_checkpoint(file);
  CHECK(read.config_yaml == written.config_yaml);
  CHECK(read.epoch == 1);
  CHECK(read.iteration == 42);
  CHECK(read.last_opt_step == 40);
  CHECK(read.best_fitness == 0.25);
  CHECK(read.best_epoch == 1);
  CHECK(read.loss_updates == 2);
  CHECK(read.optimizer_name == "MuSGD");
  CHECK(read.world_size == 2);
  CHECK(read.precision == "bf16");
  CHECK(equal_maps(read.model, written.model));
  CHECK(equal_maps(read.ema, written.ema));
  CHECK(equal_maps(read.optimizer, written.optimizer));
  CHECK(torch::equal(read.rng_cpu, written.rng_cpu));
  CHECK_FALSE(read.rng_cuda.defined());
  CHECK(read.date == written.date);
}

TEST_CASE("checkpoint: a truncated file gets a clear error and the previous one still loads") {
  trainer::test::TempDir dir;
  const auto good = dir.path() / "last.ckpt";
  save_checkpoint(sample(1.0), good);
  // A write that died half-way: only the first half of a newer checkpoint reached the disk. With
  // atomic writes it can only ever exist under a temporary name, never under the real one.
  const auto broken = dir.path() / "broken.ckpt";
  save_checkpoint(sample(2.0), broken);
  const auto size = std::filesystem::file_size(broken);
  std::filesystem::resize_file(broken, size / 2);
  std::string message;
  try {
    load_checkpoint(broken);
  } catch (const trainer::core::InputError& e) {
    message = e.what();
  }
  CHECK(message.find("broken.ckpt: not a readable checkpoint (truncated") != std::string::npos);
  CHECK(load_checkpoint(good).best_fitness == 0.25);
}

TEST_CASE("checkpoint: a corrupt length is refused before anything allocates it") {
  // Fuzz finding (tests/fuzz/regressions/checkpoint): a 3 KB file whose pickle declared a 1.9 GB
  // string made torch::pickle_load allocate it and take seconds before failing.
  trainer::test::TempDir dir;
  const auto file = dir.path() / "last.ckpt";
  save_checkpoint(sample(1.0), file);
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_NOTHROW(parse_checkpoint(bytes, "last.ckpt"));
  const std::string key("X\x06\0\0\0format", 11);  // BINUNICODE, length 6, "format"
  const auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
  REQUIRE(at != bytes.end());
  at[4] = 0x70;  // length 0x70000006
  CHECK_THROWS_WITH_AS(parse_checkpoint(bytes, "last.ckpt"),
                       doctest::Contains("last.ckpt: not a readable checkpoint (truncated, "
                                         "corrupt, or not written by trainer: pickle declares"),
                       trainer::core::InputError);
}

TEST_CASE("checkpoint: the check reads the data.pkl LibTorch reads, named by the first entry") {
  // LibTorch takes the archive's folder from the FIRST zip entry (the writer puts archive/data/0
  // first) and reads <folder>/data.pkl. The check used to take the first */data.pkl listed: a
  // sound other/data.pkl listed before a hostile archive/data.pkl hid it.
  trainer::test::TempDir dir;
  save_checkpoint(sample(1.0), dir / "last.ckpt");
  std::ifstream in(dir / "last.ckpt", std::ios::binary);
  auto records = trainer::test::zip_records(
      std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  REQUIRE(records.front().first == "archive/data/0");
  std::string& pickle = trainer::test::record(records, "archive/data.pkl");
  const std::string sound = pickle;
  const std::string key("X\x06\0\0\0format", 11);  // BINUNICODE, length 6, "format"
  const size_t at = pickle.find(key);
  REQUIRE(at != std::string::npos);
  pickle[at + 4] = 0x70;  // length 0x70000006
  records.insert(records.begin() + 1, {"other/data.pkl", sound});
  const std::vector<char> bytes = trainer::test::zip_file(records);
  const std::string problem = "pickle declares 1879048198 bytes at byte " + std::to_string(at) +
                              " but has " + std::to_string(sound.size() - at - 5) + " left";
  CHECK_THROWS_WITH_AS(parse_checkpoint(bytes, "last.ckpt"),
                       ("last.ckpt: not a readable checkpoint (truncated, corrupt, or not written "
                        "by trainer: " +
                        problem + ")")
                           .c_str(),
                       trainer::core::InputError);
}

TEST_CASE("checkpoint: a storage record shorter than its tensor is refused") {
  // LibTorch gives a storage the size its persistent id declares, whatever its record holds.
  trainer::test::TempDir dir;
  save_checkpoint(sample(1.0), dir / "last.ckpt");
  std::ifstream in(dir / "last.ckpt", std::ios::binary);
  auto records = trainer::test::zip_records(
      std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  std::string& storage = trainer::test::record(records, "archive/data/0");
  const size_t full = storage.size();
  REQUIRE(full >= 8);
  storage.resize(full / 2);
  CHECK_THROWS_WITH_AS(
      parse_checkpoint(trainer::test::zip_file(records), "last.ckpt"),
      ("last.ckpt: not a readable checkpoint (truncated, corrupt, or not written "
       "by trainer: storage record archive/data/0 holds " +
       std::to_string(full / 2) + " bytes, its tensor needs " + std::to_string(full) + ")")
          .c_str(),
      trainer::core::InputError);
}

TEST_CASE("checkpoint: a kill during the write leaves the previous checkpoint intact") {
  namespace fs = std::filesystem;
  trainer::test::TempDir dir;
  const auto file = dir.path() / "last.ckpt";
  save_checkpoint(sample(1.0), file);
  Checkpoint big = sample(3.0);
  big.model["big"] = torch::randn({16 << 20});  // 64 MiB: the write takes a while
  save_checkpoint(big, dir.path() / "size.ckpt");
  const auto full_size = fs::file_size(dir.path() / "size.ckpt");
  fs::remove(dir.path() / "size.ckpt");
  // The temporary being written, if any: (path, size).
  auto partial = [&]() -> std::pair<fs::path, uintmax_t> {
    for (const auto& e : fs::directory_iterator(dir.path())) {
      if (e.path().filename().string().rfind("last.ckpt.tmp.", 0) == 0) {
        std::error_code ec;
        const auto size = fs::file_size(e.path(), ec);
        if (!ec) return {e.path(), size};
      }
    }
    return {{}, 0};
  };
  // Fork a writer and SIGKILL it once its temporary file is partly written; provably mid-write
  // when the partial file is still there after the kill, shorter than the full checkpoint.
  int killed_mid_write = 0;
  for (int attempt = 0; attempt < 10 && killed_mid_write < 2; ++attempt) {
    const pid_t child = fork();
    if (child == 0) {
      save_checkpoint(big, file);
      _exit(0);
    }
    for (int poll = 0; poll < 200000 && partial().second == 0; ++poll) usleep(50);
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    const auto [tmp, size] = partial();
    if (!tmp.empty()) {
      CHECK(size < full_size);
      ++killed_mid_write;
      const Checkpoint after = load_checkpoint(file);  // the previous one, whole
      CHECK(after.best_fitness == 0.25);
      CHECK_THROWS_AS(load_checkpoint(tmp), trainer::core::InputError);  // the torn one is refused
      fs::remove(tmp);
    } else {
      const Checkpoint after = load_checkpoint(file);  // the write won the race: new and whole
      CHECK((after.best_fitness == 0.25 || after.best_fitness == 0.75));
    }
  }
  CHECK(killed_mid_write >= 1);
}

TEST_CASE("checkpoint: foreign and missing files are named") {
  trainer::test::TempDir dir;
  const auto foreign = dir.path() / "notes.txt";
  trainer::test::write_text(foreign, "hello");
  CHECK_THROWS_WITH_AS(load_checkpoint(foreign), doctest::Contains("notes.txt: not a readable"),
                       trainer::core::InputError);
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.path() / "none.ckpt"),
                       doctest::Contains("none.ckpt: cannot open checkpoint"),
                       trainer::core::InputError);
  // A torch.save-format dict without our format tag.
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("epoch", int64_t{3});
  const auto bytes = torch::pickle_save(c10::IValue(dict));
  const auto other = dir.path() / "other.pt";
  std::ofstream(other, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CHECK_THROWS_WITH_AS(load_checkpoint(other), doctest::Contains("format tag missing"),
                       trainer::core::InputError);
}

TEST_CASE("checkpoint: a format-1 file loads (its weights) but is refused for resume, named") {
  trainer::test::TempDir dir;
  Checkpoint old = sample(1.0);
  old.version = 1;  // parameter groups in the pre-8.4.190 order
  save_checkpoint(old, dir / "old.ckpt");
  const Checkpoint back = load_checkpoint(dir / "old.ckpt");
  CHECK(back.version == 1);
  CHECK(torch::equal(back.model.at("model.0.conv.weight"), old.model.at("model.0.conv.weight")));
  trainer::core::TrainConfig config;
  config.run.resume = (dir / "old.ckpt").string();
  // A dataset that exists: fit checks the config (dataset yaml included) before the checkpoint.
  std::filesystem::create_directories(dir / "d" / "images");
  trainer::test::write_text(dir / "d.yaml", "path: " + (dir / "d").string() +
                                                "\ntrain: images\nval: images\nnames: {0: a}\n");
  config.data.data = (dir / "d.yaml").string();
  try {
    fit(config);
    FAIL("expected an InputError");
  } catch (const trainer::core::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("old.ckpt") != std::string::npos);
    CHECK(what.find("cannot be resumed") != std::string::npos);
  }
  CHECK(load_checkpoint(dir / "old.ckpt").version == 1);  // and it is left as it was
}
