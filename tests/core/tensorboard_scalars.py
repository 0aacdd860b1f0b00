# Reads an event file with TensorBoard's own loader and prints what it holds, one line each:
#   scalar <step> <value as float32 bits in hex> <tag>
#   image <step> <height> <width> <encoded byte count> <tag>
# The C++ test (test_tensorboard_reader.cpp) compares these with what it wrote.
import struct
import sys

from tensorboard.backend.event_processing import event_accumulator

acc = event_accumulator.EventAccumulator(
    sys.argv[1], size_guidance={event_accumulator.SCALARS: 0, event_accumulator.IMAGES: 0})
acc.Reload()
tags = acc.Tags()
for tag in tags["scalars"]:
    for e in acc.Scalars(tag):
        bits = struct.unpack("<I", struct.pack("<f", e.value))[0]
        print(f"scalar {e.step} {bits:08x} {tag}")
for tag in tags["images"]:
    for e in acc.Images(tag):
        print(f"image {e.step} {e.height} {e.width} {len(e.encoded_image_string)} {tag}")
