# Build information (version, git revision, dirty flag, CUDA) as a tiny generated library that is
# rewritten only when its content changes, so a commit does not trigger a rebuild of everything.
set(TRAINER_BUILD_INFO_CPP ${PROJECT_BINARY_DIR}/generated/build_info_values.cpp)
add_custom_target(trainer_build_info_gen
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${TRAINER_BUILD_INFO_CPP}
          -DVERSION=${PROJECT_VERSION} -DWITH_CUDA=${TRAINER_WITH_CUDA}
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
          -P ${PROJECT_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${TRAINER_BUILD_INFO_CPP}
  COMMENT "Checking build info")
# Write it once at configure time too, so the file exists before the first build.
execute_process(COMMAND ${CMAKE_COMMAND}
                -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${TRAINER_BUILD_INFO_CPP}
                -DVERSION=${PROJECT_VERSION} -DWITH_CUDA=${TRAINER_WITH_CUDA}
                -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
                -P ${PROJECT_SOURCE_DIR}/cmake/WriteBuildInfo.cmake)
