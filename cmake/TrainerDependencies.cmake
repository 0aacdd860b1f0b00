# Debian-packaged dependencies (installed by scripts/setup.sh).
# Image decoding, TRAINER_IMAGE_CODECS: `opencv` (default) decodes with OpenCV's imgcodecs; `turbojpeg`
# with libjpeg-turbo's TurboJPEG (JPEG) and libpng (PNG) and needs only OpenCV core+imgproc. imgcodecs
# drags in GDAL, GDCM, OpenEXR, HDF5, Poppler (~200 MiB on Debian 12), too much for the prepared GPU
# bundle (scripts/make_gpu_bundle.sh), which is built with `turbojpeg`. `trainer_image_codecs` links
# the selected backend; TRAINER_IMAGE_CODECS_DEFINE (TRAINER_IMAGE_CODECS_OPENCV=1 or _TURBOJPEG=1) is
# set on lib/data/image_codec.cpp alone, the one file that chooses.
set(TRAINER_IMAGE_CODECS opencv CACHE STRING "Image decoding: opencv (imgcodecs) or turbojpeg (TurboJPEG + libpng)")
set_property(CACHE TRAINER_IMAGE_CODECS PROPERTY STRINGS opencv turbojpeg)
if(TRAINER_IMAGE_CODECS STREQUAL "opencv")
  find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)
elseif(TRAINER_IMAGE_CODECS STREQUAL "turbojpeg")
  find_package(OpenCV REQUIRED COMPONENTS core imgproc)
else()
  message(FATAL_ERROR "TRAINER_IMAGE_CODECS must be opencv or turbojpeg, not '${TRAINER_IMAGE_CODECS}'")
endif()
# `trainer_turbojpeg` (TurboJPEG + libpng): required by TRAINER_IMAGE_CODECS=turbojpeg; in the default
# build it exists when libturbojpeg0-dev and libpng-dev are installed, so tests can check the light
# decoder against OpenCV's.
find_path(TRAINER_TURBOJPEG_INCLUDE_DIR turbojpeg.h)
find_library(TRAINER_TURBOJPEG_LIBRARY turbojpeg)
find_package(PNG QUIET)
if(TRAINER_TURBOJPEG_INCLUDE_DIR AND TRAINER_TURBOJPEG_LIBRARY AND PNG_FOUND)
  add_library(trainer_turbojpeg INTERFACE)
  target_include_directories(trainer_turbojpeg SYSTEM INTERFACE ${TRAINER_TURBOJPEG_INCLUDE_DIR})
  target_link_libraries(trainer_turbojpeg INTERFACE ${TRAINER_TURBOJPEG_LIBRARY} PNG::PNG)
elseif(TRAINER_IMAGE_CODECS STREQUAL "turbojpeg")
  message(FATAL_ERROR "TRAINER_IMAGE_CODECS=turbojpeg needs TurboJPEG and libpng (Debian: "
                      "libturbojpeg0-dev libpng-dev): turbojpeg.h ${TRAINER_TURBOJPEG_INCLUDE_DIR}, "
                      "libturbojpeg ${TRAINER_TURBOJPEG_LIBRARY}, libpng found: ${PNG_FOUND}")
endif()
add_library(trainer_image_codecs INTERFACE)
if(TRAINER_IMAGE_CODECS STREQUAL "turbojpeg")
  target_link_libraries(trainer_image_codecs INTERFACE trainer_turbojpeg opencv_core)
  set(TRAINER_IMAGE_CODECS_DEFINE TRAINER_IMAGE_CODECS_TURBOJPEG=1)
else()
  target_link_libraries(trainer_image_codecs INTERFACE opencv_imgcodecs)
  set(TRAINER_IMAGE_CODECS_DEFINE TRAINER_IMAGE_CODECS_OPENCV=1)
endif()
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(Threads REQUIRED)
if(TRAINER_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()
# yaml-cpp 0.7 exports `yaml-cpp`; newer ones `yaml-cpp::yaml-cpp`.
if(TARGET yaml-cpp::yaml-cpp)
  set(TRAINER_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(TRAINER_YAML_TARGET yaml-cpp)
endif()
