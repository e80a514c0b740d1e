"""Write the TFRecord files the TFRecord-reading programs train on, with TensorFlow itself.

    python tests/equivalence/make_records.py DIR

Two files of `tf.train.Example`s: a 10-float feature vector stored as raw float32
bytes, a 2x2 grayscale PNG thumbnail, an int64 label and a name.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(21)
    for part in range(2):
        with tf.io.TFRecordWriter(os.path.join(out, f"train-{part}.tfrecord")) as writer:
            for i in range(48):
                features = rng.random(10).astype(np.float32)
                label = int(features[:5].sum() > features[5:].sum())
                thumb = (rng.random((2, 2, 1)) * 255).astype(np.uint8)
                example = tf.train.Example(features=tf.train.Features(feature={
                    "features": tf.train.Feature(bytes_list=tf.train.BytesList(value=[features.tobytes()])),
                    "thumb": tf.train.Feature(bytes_list=tf.train.BytesList(value=[tf.io.encode_png(thumb).numpy()])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"{part}-{i}".encode()])),
                }))
                writer.write(example.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
