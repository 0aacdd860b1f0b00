// The reference predictor's text formats by hand: labels/*.txt rows, the console summary, COCO
// entries, image ids; and that annotation draws on a copy; for each task's output.
#include <doctest/doctest.h>

#include <sstream>

#include "eval/rle.h"
#include "model/yolo_model.h"
#include "predict/predict_output.h"
#include "predict/task/segment_output.h"
#include "predict/task_output.h"

using namespace trainer;
using predict::ImagePrediction;
using predict::PredictedObject;

TEST_CASE("predict output: a YOLO txt row by hand") {
  const auto detect = predict::make_task_output(core::Task::kDetect);
  const auto pose = predict::make_task_output(core::Task::kPose);
  ImagePrediction p;
  // Box (100, 50)-(300, 250) on a 640 x 480 image: centre (200, 150) -> 0.3125, 0.3125;
  // size 200 x 200 -> 0.3125, 0.416667 (%g: 6 significant digits).
  p.objects.push_back({{100, 50, 300, 250}, 0.875f, 2, {}});
  CHECK(detect->yolo_txt(p, 480, 640, false) == "2 0.3125 0.3125 0.3125 0.416667\n");
  CHECK(detect->yolo_txt(p, 480, 640, true) == "2 0.3125 0.3125 0.3125 0.416667 0.875\n");
  // Pose: each keypoint as x / W, y / H, confidence.
  p.objects[0].keypoints = {320, 240, 0.5f, 64, 48, 1.0f};
  CHECK(pose->yolo_txt(p, 480, 640, false) ==
        "2 0.3125 0.3125 0.3125 0.416667 0.5 0.5 0.5 0.1 0.1 1\n");
  CHECK(pose->yolo_txt(ImagePrediction{}, 480, 640, true).empty());
}

TEST_CASE("predict output: the summary counts classes in id order, plural with s") {
  const std::vector<std::string> names = {"person", "bicycle", "car", "bus"};
  ImagePrediction p;
  CHECK(predict::summary(p, names) == "(no detections), ");
  for (int cls : {3, 0, 0}) p.objects.push_back({{0, 0, 1, 1}, 0.5f, cls, {}});
  CHECK(predict::summary(p, names) == "2 persons, 1 bus, ");
}

TEST_CASE("predict output: COCO entries and image ids") {
  ImagePrediction p;
  p.objects.push_back({{10, 20, 40, 60}, 0.75f, 1, {}});
  const auto d = predict::make_task_output(core::Task::kDetect)->coco_detections(p, 42, {1, 2, 3});
  REQUIRE(d.size() == 1);
  CHECK(d[0].image_id == 42);
  CHECK(d[0].category_id == 2);
  CHECK(d[0].bbox_xywh == std::array<double, 4>{10, 20, 30, 40});
  CHECK(predict::image_id_for("/x/000000000139.jpg", 7) == 139);
  CHECK(predict::image_id_for("/x/bus.jpg", 7) == 7);
}

TEST_CASE("predict output: annotation draws on a copy, line width as the reference") {
  CHECK(predict::annotation_line_width(480, 640, 0) == 2);
  CHECK(predict::annotation_line_width(1080, 1920, 0) == 5);  // 3003 / 2 * 0.003 = 4.5045
  CHECK(predict::annotation_line_width(1080, 1920, 7) == 7);
  cv::Mat image(60, 80, CV_8UC3, cv::Scalar(0, 0, 0));
  ImagePrediction p;
  p.objects.push_back({{10, 20, 40, 50}, 0.9f, 0, {}});
  const cv::Mat out =
      predict::make_task_output(core::Task::kDetect)->annotate(image, p, {"thing"}, 0);
  CHECK(cv::countNonZero(image.reshape(1)) == 0);
  CHECK(cv::countNonZero(out.reshape(1)) > 0);
}

TEST_CASE("predict output: a mask becomes an outline row, an RLE entry and a tinted region") {
  const auto segment = predict::make_task_output(core::Task::kSegment);
  ImagePrediction p;
  PredictedObject o{{20, 10, 40, 20}, 0.5f, 1, {}};
  o.mask = cv::Mat::zeros(60, 80, CV_8U);
  o.mask(cv::Rect(20, 10, 20, 10)).setTo(1);  // columns 20..39, rows 10..19
  p.objects.push_back(o);
  // The outline: the rectangle's 4 corner pixels (a simple chain), normalised by 80 x 60.
  const auto outline = predict::mask_outline(o.mask);
  REQUIRE(outline.size() == 8);
  const std::string row = segment->yolo_txt(p, 60, 80, false);
  CHECK(row.rfind("1 ", 0) == 0);
  CHECK(row.find(" 0.25 0.166667") != std::string::npos);    // (20, 10)
  CHECK(row.find(" 0.4875 0.316667") != std::string::npos);  // (39, 19)
  const auto d = segment->coco_detections(p, 1, {1, 2});
  REQUIRE(d.size() == 1);
  REQUIRE(d[0].segmentation.has_value());
  CHECK(d[0].segmentation->height == 60);
  CHECK(eval::rle_area(*d[0].segmentation) == 200);
  cv::Mat image(60, 80, CV_8UC3, cv::Scalar(0, 0, 0));
  const cv::Mat out = segment->annotate(image, p, {"a", "b"}, 1);
  CHECK(out.at<cv::Vec3b>(15, 30) != cv::Vec3b(0, 0, 0));  // inside the mask, off the box lines
  // The detection output neither tints nor writes the mask.
  const auto detect = predict::make_task_output(core::Task::kDetect);
  CHECK(detect->annotate(image, p, {"a", "b"}, 1).at<cv::Vec3b>(15, 30) == cv::Vec3b(0, 0, 0));
  CHECK(detect->yolo_txt(p, 60, 80, false) == "1 0.375 0.25 0.25 0.166667\n");
  CHECK_FALSE(detect->coco_detections(p, 1, {1, 2})[0].segmentation.has_value());
  CHECK(predict::mask_outline(cv::Mat::zeros(4, 4, CV_8U)).empty());
}

TEST_CASE("predict output: a rotated box becomes 4 normalised corners, rbox and poly, a polygon") {
  const auto obb = predict::make_task_output(core::Task::kObb);
  ImagePrediction p;
  // An axis-aligned 40 x 20 box centred at (40, 30), angle 0, on an 80 x 60 image: corners at
  // x 20 / 60, y 20 / 40 -> 0.25 / 0.75 and 0.333333 / 0.666667.
  PredictedObject o{{20, 20, 60, 40}, 0.5f, 3, {}};
  o.rbox = {40, 30, 40, 20, 0};
  p.objects.push_back(o);
  const std::string row = obb->yolo_txt(p, 60, 80, true);
  CHECK(row.rfind("3 ", 0) == 0);
  CHECK(row.find(" 0.25 0.333333") != std::string::npos);
  CHECK(row.find(" 0.75 0.666667") != std::string::npos);
  CHECK(row.size() - row.find_last_of(' ') == 5);  // " 0.5\n": the score last
  std::istringstream numbers(row);
  int values = 0;
  for (std::string v; numbers >> v;) ++values;
  CHECK(values == 10);  // class, 4 corners x 2, score
  const auto d = obb->coco_detections(p, 5, {});
  REQUIRE(d.size() == 1);
  CHECK(d[0].category_id == 4);  // class + 1 past the table
  CHECK(d[0].rbox == std::vector<double>{40, 30, 40, 20, 0});
  CHECK(d[0].poly.size() == 8);
  cv::Mat image(60, 80, CV_8UC3, cv::Scalar(0, 0, 0));
  const cv::Mat out = obb->annotate(image, p, {}, 1);
  CHECK(cv::countNonZero(out.reshape(1)) > 0);
}

TEST_CASE("predict output: each task's output is chosen from the model's head") {
  CHECK(predict::predicted_task(*model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3)) ==
        core::Task::kDetect);
  for (core::Task task : {core::Task::kPose, core::Task::kSegment, core::Task::kObb}) {
    const auto m = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3, task, {5, 3});
    CHECK(predict::predicted_task(*m) == task);
  }
}
