// Anchor translation unit for the precompiled LibTorch header (see TrainerTorch.cmake).
