"""`keras.utils`'s `image_`, `text_` and `audio_dataset_from_directory` and `timeseries_dataset_from_array` on `tfdata`.

Keras 3's indexing, kept exactly: class names from the sorted sub-directories (or as given),
files walked and sorted as `os.walk` lists them, the global shuffle of paths and labels by
`np.random.RandomState(seed)` (so a seeded `validation_split` puts the same files in each
subset as Keras does), the split (the last `int(validation_split * n)` files for validation),
the label modes (`int` int32, `categorical` one-hot float32, `binary` float32 `(1,)`) and the
messages. Images are decoded by Pillow (`tfio.decode_image`) and resized as `tf.image.resize`
resizes (bilinear or nearest: the methods with TF's numbers here), float32. WAV files are decoded
by `tfio.decode_wav` (`tf.audio.decode_wav`'s values) and padded as Keras pads them. What differs:
the per-epoch shuffle of the training files is `tfdata`'s buffer shuffle, whose order is not
tf.data's; ragged audio batches and resampling (`sampling_rate`) are refused.
"""

from __future__ import annotations

import os

import numpy as np

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
AUDIO_FORMATS = (".wav",)


def _check_split(validation_split, subset, shuffle, seed) -> None:
    """Keras's `check_validation_split_arg`."""
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError('`subset` must be either "training", "validation" or "both", received: ' f"{subset}")
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, "
                         "to make sure that there is no overlap between the training and validation subset.")


def _walk(directory: str, follow_links: bool, formats) -> list[tuple[str, str]]:
    walk = os.walk(directory, followlinks=follow_links)
    return [(root, name) for root, _, files in sorted(walk, key=lambda entry: entry[0])
            for name in sorted(files) if name.lower().endswith(formats)]


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None, follow_links=False,
                    verbose=True):
    """Keras's `index_directory`: (file paths, labels, class names), shuffled as Keras shuffles them."""
    directory = os.fspath(directory)
    if labels == "inferred":
        subdirs = [name for name in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError("The `class_names` passed did not match the names of the subdirectories of the "
                                 f"target directory. Expected: {subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = list(class_names)
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` cannot be specified (the "
                             "`class_names` will be the sorted list of labels).")
    names, found_labels = [], []
    for index, subdir in enumerate(subdirs):
        path = os.path.join(directory, subdir)
        dirname = os.path.basename(path)
        for root, name in _walk(path, follow_links, formats):
            names.append(os.path.join(dirname, os.path.relpath(os.path.join(root, name), path)))
            found_labels.append(index)
    if labels == "inferred":
        labels, class_names = np.asarray(found_labels, dtype="int32"), subdirs
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(names):
            raise ValueError("Expected the lengths of `labels` to match the number of files in the target directory. "
                             f"len(labels) is {len(labels)} while we found {len(names)} files in directory "
                             f"{directory}.")
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        print(f"Found {len(names)} files." if labels is None else
              f"Found {len(names)} files belonging to {len(class_names)} classes.")
    paths = [os.path.join(directory, name) for name in names]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return paths, labels, class_names


def training_or_validation_split(samples, labels, validation_split, subset):
    """Keras's `get_training_or_validation_split`."""
    if not validation_split:
        return samples, labels
    count = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - count} files for training.")
        return samples[:-count], None if labels is None else labels[:-count]
    if subset == "validation":
        print(f"Using {count} files for validation.")
        return samples[-count:], None if labels is None else labels[-count:]
    raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')


def _label_array(labels, label_mode, num_classes) -> np.ndarray:
    labels = np.asarray(labels)
    if label_mode == "binary":
        return labels.astype(np.float32)[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[labels.astype(np.int64)]
    return labels.astype(np.int32)


def _datasets(paths, labels, label_mode, class_names, validation_split, subset, load, shuffle, buffer_size, seed,
              batch_size, empty, padded=False):
    """One dataset (or the training and validation pair for `subset="both"`), each with `class_names`
    and `file_paths`, as Keras builds them. `empty(part)` is Keras's message for a part with no
    files ("training " or "validation " for `subset="both"`, else ""); `padded` batches with
    `padded_batch`, each batch padded with zeros to its largest element, as Keras batches audio."""
    from .. import tfdata

    def split(part, named):
        # Keras checks each part as soon as it is split, before splitting the next one
        part_paths, part_labels = training_or_validation_split(paths, labels, validation_split, part)
        if not part_paths:
            raise ValueError(empty(f"{part} " if named else ""))
        return part_paths, part_labels

    def build(part_paths, part_labels, shuffled):
        names = np.array(part_paths, dtype=object)
        if label_mode:
            dataset = tfdata.Dataset.from_tensor_slices(
                (names, _label_array(part_labels, label_mode, len(class_names) if class_names else 0)))
        else:
            dataset = tfdata.Dataset.from_tensor_slices(names)
        if shuffled:
            dataset = dataset.shuffle(buffer_size, seed=seed)
        dataset = dataset.map((lambda path, label: (load(path), label)) if label_mode else load)
        if batch_size is not None:
            dataset = dataset.padded_batch(batch_size) if padded else dataset.batch(batch_size)
        dataset = dataset.prefetch(tfdata.AUTOTUNE)
        dataset.class_names, dataset.file_paths = class_names, list(part_paths)
        return dataset

    if subset == "both":
        train = split("training", True)
        validation = split("validation", True)
        return [build(*train, shuffle), build(*validation, False)]
    return build(*split(subset, False), shuffle)


def _text(value) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _indexed(directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset, follow_links,
             verbose, formats, kind: str, samples: str, checks=None, the=""):
    """Keras's checks of the arguments the three functions share (`checks()`: a function's own,
    made where Keras makes them), then the indexed files: (paths, labels, label mode, class names,
    seed)."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(f"{the}`labels` argument should be a list/tuple of integer labels, of the same size as "
                             f"the number of {kind} files in the target directory. If you wish to infer the labels "
                             "from the subdirectory names in the target directory, pass `labels=\"inferred\"`. If "
                             f"you wish to get a dataset that only contains {samples} (no labels), pass "
                             f"`labels=None`. Received: labels={labels}")
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, '
                             f"and class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                         f"label_mode={label_mode}")
    if checks is not None:
        checks()
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, formats, class_names, shuffle, seed,
                                                 follow_links, verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    return paths, labels, label_mode, class_names, seed


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, color_mode="rgb",
                                 batch_size=32, image_size=(256, 256), shuffle=True, seed=None, validation_split=None,
                                 subset=None, interpolation="bilinear", follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, verbose=True, **kwargs):
    """Keras's `image_dataset_from_directory`: batches of `(images, labels)`, images float32
    `(batch, height, width, channels)`."""
    from .. import tfio, tfmath

    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError(f'`color_mode` must be one of {{"rgb", "rgba", "grayscale"}}. Received: color_mode={color_mode}')
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    height, width = (int(v) for v in image_size)
    interpolation = interpolation.lower()
    if interpolation not in ("bilinear", "nearest") or crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError("image_dataset_from_directory: only `interpolation` 'bilinear' or 'nearest', "
                                  "without crop_to_aspect_ratio or pad_to_aspect_ratio, resizes with TF's numbers here")
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("image_dataset_from_directory: images come channels-last, as TF's do")
    paths, labels, label_mode, class_names, seed = _indexed(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset, follow_links, verbose,
        IMAGE_FORMATS, "image", "images")

    def load(path):
        with open(_text(path), "rb") as handle:
            image = tfio.decode_image(handle.read(), channels=channels)
        return tfmath.image_resize(image, (height, width), method=interpolation).astype("float32")

    return _datasets(paths, labels, label_mode, class_names, validation_split, subset, load, shuffle,
                     batch_size * 8 if batch_size is not None else 1024, seed, batch_size,
                     lambda part: f"No {part}images found in directory {directory}. Allowed formats: {IMAGE_FORMATS}")


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, verbose=True, **kwargs):
    """Keras's `text_dataset_from_directory`: batches of `(texts, labels)`, each text the file's
    bytes (the first `max_length` of them)."""
    paths, labels, label_mode, class_names, seed = _indexed(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset, follow_links, verbose,
        (".txt",), "text", "text samples")

    def load(path):
        with open(_text(path), "rb") as handle:
            text = handle.read()
        if max_length is not None:  # (tf.strings.substr: bytes)
            text = text[:max_length]
        return np.array(text, dtype=object)

    return _datasets(paths, labels, label_mode, class_names, validation_split, subset, load, shuffle,
                     batch_size * 8 if batch_size is not None else 1024, seed, batch_size,
                     lambda part: f"No {part}text files found in directory {directory}. Allowed format: .txt")


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                 sampling_rate=None, output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None, follow_links=False, verbose=True):
    """Keras's `audio_dataset_from_directory`: batches of `(audio, labels)`, audio float32
    `(batch, samples, channels)` as `tf.audio.decode_wav` gives it, each batch padded with zeros to
    its longest clip (and its most channels), or every clip cut or padded to
    `output_sequence_length` and batched as it is."""
    from .. import tfio

    def checks():
        if ragged and output_sequence_length is not None:
            raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
        if ragged:
            raise NotImplementedError(
                "audio_dataset_from_directory(ragged=True) gives tf.RaggedTensor clips, which MindSpore has no "
                "counterpart for: pass `output_sequence_length` to cut or pad every clip to one length, or leave "
                "`ragged=False` to have each batch padded with zeros to its longest clip")
        if sampling_rate is not None:
            if not isinstance(sampling_rate, int):
                raise ValueError("`sampling_rate` should have an integer value. "
                                 f"Received: sampling_rate={sampling_rate}")
            if sampling_rate <= 0:
                raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
            # Keras resamples with tensorflow_io (an ImportError where that is not installed)
            raise NotImplementedError(
                "audio_dataset_from_directory(sampling_rate=...) resamples with tensorflow_io's "
                "`tfio.audio.resample` in Keras, which has no counterpart here: resample the files beforehand, or "
                "pass `sampling_rate=None` to read them at their own rate")

    paths, labels, label_mode, class_names, seed = _indexed(
        directory, labels, label_mode, class_names, shuffle, seed, validation_split, subset, follow_links, verbose,
        AUDIO_FORMATS, "audio", "audio samples", checks, "The ")
    desired = -1 if output_sequence_length is None else output_sequence_length

    def load(path):
        audio, _ = tfio.decode_wav(tfio.read_file(_text(path)), desired_samples=desired)
        return audio

    made = _datasets(paths, labels, label_mode, class_names, validation_split, subset, load, shuffle,
                     batch_size * 8 if batch_size is not None else 1024, seed, batch_size,
                     lambda part: f"No {part}audio files found in directory {directory}. Allowed format(s): "
                                  f"{AUDIO_FORMATS}", padded=output_sequence_length is None)
    return tuple(made) if subset == "both" else made  # (Keras's image and text functions give a list)


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """Keras's `timeseries_dataset_from_array`: windows of `sequence_length` rows of `data` (every
    `sampling_rate`-th row, a window starting every `sequence_stride` rows of
    `data[start_index:end_index]`), each with `targets[start]` when targets are given; batched.
    Keras's checks and window order; the start positions are shuffled by numpy's `RandomState(seed)`
    as in Keras, the batches' buffer shuffle is `tfdata`'s (reproducible with a seed, not TF's order)."""
    from .. import tfdata

    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= len(data):
            raise ValueError("`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {len(data)}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= len(data):
            raise ValueError("`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {len(data)}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= len(data):
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, "
                             f"for data of length {len(data)}")
    start = start_index or 0
    end = len(data) if end_index is None else end_index
    count = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        count = min(count, len(targets))
    positions = np.arange(0, count, sequence_stride, dtype="int32" if count < 2147483647 else "int64")
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    rows = np.asarray(data)[start:end]
    offsets = np.arange(0, sequence_length * sampling_rate, sampling_rate)
    windows = tfdata.Dataset(lambda: (rows[p + offsets] for p in positions), len(positions))
    dataset = windows
    if targets is not None:
        labels = np.asarray(targets)[start:end]
        dataset = tfdata.Dataset.zip((windows, tfdata.Dataset(lambda: (np.asarray(labels[p]) for p in positions),
                                                              len(positions))))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    return dataset.shuffle(buffer_size=1024, seed=seed) if shuffle else dataset
