// `trainer info`'s numbers: the layer table rows, the reference's layer and module counts and
// GFLOPs (thop convention) against the figures measured with the reference (Ultralytics 8.4.190).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "model/model_summary.h"
#include "task_model_checks.h"

using namespace trainer::model;

TEST_CASE("every built-in summary matches the reference's layers, parameters and GFLOPs (slow)") {
  struct Case {
    const char* name;
    int64_t layers;  // printed: leaf modules
    double gflops;   // printed, one decimal
  };
  const Case cases[] = {{"yolo26n", 260, 6.2},  {"yolo26s", 260, 23.1},  {"yolo26m", 280, 75.6},
                        {"yolo26l", 392, 94.2}, {"yolo26x", 392, 210.1}, {"yolo11n", 181, 6.7},
                        {"yolo11s", 181, 21.8}, {"yolo11m", 231, 68.6},  {"yolo11l", 357, 87.9},
                        {"yolo11x", 357, 196.3}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto name = parse_model_name(c.name);
    auto model = build_yolo_model(name, 80);
    const auto s = summarize_model(*model, 640);
    const auto ref = reference_figures(name);
    REQUIRE(ref.has_value());
    CHECK(ref->layers == c.layers);
    CHECK(std::round(ref->gflops * 10) / 10 == doctest::Approx(c.gflops));
    CHECK(s.layers == ref->layers);
    CHECK(s.modules == ref->modules);
    CHECK(s.parameters == ref->parameters);
    // The unrounded get_flops(model, 640): the same counts, so equal up to double rounding.
    CHECK(s.gflops == doctest::Approx(ref->gflops).epsilon(1e-9));
    CHECK(std::round(s.gflops * 10) / 10 == doctest::Approx(c.gflops));
    CHECK(s.rows.size() == 24);
    int64_t sum = 0;
    for (const auto& r : s.rows) sum += r.params;
    CHECK(sum == s.parameters);
  }
}

TEST_CASE("the counts at 32x32 per rule equal the reference's (thop hooks at 32 px) (slow)") {
  // Conv MACs include YOLO11's DFL conv (4 sides x 21 anchors x 16 bins = 1,344), run by the
  // reference's eval-mode decode; attention is heads * N^2 * (key_dim + head_dim) per block.
  auto n26 = build_yolo_model(parse_model_name("yolo26n"), 80);
  const auto f26 = summarize_model(*n26, 640).flops_at_32;
  CHECK(f26.conv_macs == 7447968);
  CHECK(f26.norm_elements == 49504);
  CHECK(f26.attention_macs == 384);
  auto n11 = build_yolo_model(parse_model_name("yolo11n"), 80);
  const auto f11 = summarize_model(*n11, 640).flops_at_32;
  CHECK(f11.conv_macs == 8099984 + 1344);
  CHECK(f11.norm_elements == 40880);
  CHECK(f11.attention_macs == 192);
}

TEST_CASE("yolo26n layer rows: index, from, n, params, module, arguments") {
  auto model = build_yolo_model(parse_model_name("yolo26n"), 80);
  const auto s = summarize_model(*model, 640);
  // Layer 0: Conv(3, 16, 3, 2): 16 * 3 * 3 * 3 weights + 2 * 16 BN = 464.
  CHECK(s.rows[0].from == "-1");
  CHECK(s.rows[0].params == 464);
  CHECK(s.rows[0].module == "Conv");
  CHECK(s.rows[0].arguments == "[3, 16, 3, 2]");
  CHECK(s.rows[2].arguments == "[32, 64, 1, False, 0.25]");
  CHECK(s.rows[9].arguments == "[256, 256, 5, 3, True]");
  CHECK(s.rows[11].params == 0);
  CHECK(s.rows[12].from == "[-1, 6]");
  CHECK(s.rows[12].arguments == "[1]");
  CHECK(s.rows[22].arguments == "[384, 256, 1, True, 0.5, True]");
  CHECK(s.rows[23].from == "[16, 19, 22]");
  CHECK(s.rows[23].module == "Detect");
  CHECK(s.rows[23].arguments == "[80, 1, True, [64, 128, 256]]");
  const auto text = format_summary(s, "yolo26n");
  CHECK(text.find("yolo26n summary: 260 layers, 2,572,280 parameters, 2,572,280 gradients, 6.2 "
                  "GFLOPs") != std::string::npos);
}

TEST_CASE("GFLOPs scale with the image area, the attention products with its square") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 80);
  const auto a = summarize_model(*model, 640);
  const auto b = summarize_model(*model, 320);
  const auto& f = a.flops_at_32;
  REQUIRE(f.attention_macs > 0);
  const double per_area = 2 * (f.conv_macs + 4 * f.norm_elements) / 1e9;
  const double per_area2 = 2 * f.attention_macs / 1e9;
  CHECK(a.gflops == doctest::Approx(per_area * 400 + per_area2 * 400 * 400));
  CHECK(b.gflops == doctest::Approx(per_area * 100 + per_area2 * 100 * 100));
}

TEST_CASE("thousands separators") {
  CHECK(thousands(0) == "0");
  CHECK(thousands(999) == "999");
  CHECK(thousands(1000) == "1,000");
  CHECK(thousands(2572280) == "2,572,280");
  CHECK(thousands(-1234567) == "-1,234,567");
}

TEST_CASE("every pose summary matches the reference's layers, parameters and GFLOPs (slow)") {
  struct Case {
    const char* name;
    int64_t params_nc1;  // reference-tasks.md 2.3
    double gflops_nc1;   // unrounded get_flops(PoseModel(yaml, nc=1), 640)
  };
  const Case cases[] = {
      {"yolo26n-pose", 3679464, 10.4389504},   {"yolo26s-pose", 11809352, 29.4797184},
      {"yolo26m-pose", 24222664, 85.4558592},  {"yolo26l-pose", 28626120, 103.9789952},
      {"yolo26x-pose", 62731860, 225.8345472}, {"yolo11n-pose", 2874462, 7.6014288},
      {"yolo11s-pose", 9918238, 23.4263248},   {"yolo11m-pose", 20912364, 72.0531456},
      {"yolo11l-pose", 26169836, 91.2611328},  {"yolo11x-pose", 58798636, 204.1949952},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto name = parse_model_name(c.name);
    auto model = build_yolo_model(name, 80);
    const auto s = trainer::test::check_reference_summary(*model);
    CHECK(s.rows.size() == 24);
    auto one = build_yolo_model(name, 1);
    const auto s1 = summarize_model(*one, 640);
    CHECK(s1.parameters == c.params_nc1);
    CHECK(s1.gflops == doctest::Approx(c.gflops_nc1).epsilon(1e-9));
  }
}

TEST_CASE("yolo26n-pose and yolo11n-pose head rows") {
  auto p26 = build_yolo_model(parse_model_name("yolo26n-pose"), 1);
  const auto s26 = summarize_model(*p26, 640);
  CHECK(s26.rows[23].module == "Pose26");
  CHECK(s26.rows[23].arguments == "[1, [17, 3], 1, True, [64, 128, 256]]");
  CHECK(format_summary(s26, "yolo26n-pose")
            .find("yolo26n-pose summary: 363 layers, 3,679,464 parameters, 3,679,464 gradients, "
                  "10.4 GFLOPs") != std::string::npos);
  auto p11 = build_yolo_model(parse_model_name("yolo11n-pose"), 1);
  const auto s11 = summarize_model(*p11, 640);
  CHECK(s11.rows[23].module == "Pose");
  CHECK(s11.rows[23].arguments == "[1, [17, 3], 16, False, [64, 128, 256]]");
}
