"""`StringLookup` and `IntegerLookup`: Keras 3's vocabulary layers, in numpy beside the model.

The vocabulary is Keras's: the mask token first (when there is one), then the OOV token,
then the tokens given, or learned by `adapt` (most frequent first, ties broken as Keras's
`np.lexsort` breaks them, cut to `max_tokens`). A lookup gives int64 indices (an unknown token
the OOV index, the mask token 0), or with `output_mode` "one_hot", "multi_hot" or "count"
encodings of Keras's shapes (int64, as Keras 3 gives them); `invert=True` maps indices back to tokens. Strings are
numpy arrays of `bytes`/`str` (MindSpore has no string tensor; tokens come back as `bytes`
arrays, as the runtime's other string values). One OOV index at most: Keras hashes tokens
into several with TF's farmhash, which is not available without TensorFlow.
"""

from __future__ import annotations

import collections
import re

import numpy as np

from .base import Layer

_ENCODINGS = ("int", "one_hot", "multi_hot", "count")


class _IndexLookup(Layer):
    _strings = True

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=None, vocabulary=None,
                 vocabulary_dtype=None, idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, encoding="utf-8", **kwargs):
        super().__init__(**kwargs)
        if output_mode not in _ENCODINGS:
            raise NotImplementedError(f"{type(self).__name__}: output_mode {output_mode!r} (only {_ENCODINGS} here; "
                                      "'tf_idf' keeps TensorFlow)")
        if num_oov_indices not in (0, 1):
            raise NotImplementedError(f"{type(self).__name__}: num_oov_indices={num_oov_indices}: Keras hashes tokens "
                                      "into several OOV indices with TF's farmhash; one (or none) here")
        if sparse:
            raise NotImplementedError(f"{type(self).__name__}: sparse outputs (MindSpore's dense tensors here)")
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: output_mode={output_mode}")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`. Received: max_tokens=None")
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token = self._key(mask_token), self._key(oov_token)
        self.invert, self.output_mode, self.pad_to_max_tokens = bool(invert), output_mode, bool(pad_to_max_tokens)
        self.encoding = encoding
        self._use([])
        self._given = vocabulary is not None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)
        self._call_takes_training = False

    # --- tokens ------------------------------------------------------------------------------

    def _key(self, token):
        if token is None:
            return None
        if self._strings:
            return token.decode(self.encoding) if isinstance(token, bytes) else str(token)
        return int(token)

    def _keys(self, values) -> np.ndarray:
        array = np.asarray(values.asnumpy() if hasattr(values, "asnumpy") else values)
        if not self._strings:
            return array.astype(np.int64)
        flat = [v.decode(self.encoding) if isinstance(v, bytes) else str(v) for v in array.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(array.shape)

    def _specials(self) -> list:
        """The mask token (an int lookup's index 0; the encodings drop it) and the OOV token."""
        specials = [] if self.mask_token is None or self.output_mode != "int" else [self.mask_token]
        return specials + ([self.oov_token] * self.num_oov_indices)

    def set_vocabulary(self, vocabulary, idf_weights=None) -> None:
        if isinstance(vocabulary, str) and self._strings:
            with open(vocabulary, encoding=self.encoding) as handle:
                vocabulary = [line.rstrip("\n") for line in handle]
        tokens = [self._key(t) for t in np.asarray(vocabulary.asnumpy() if hasattr(vocabulary, "asnumpy")
                                                    else vocabulary, dtype=object).reshape(-1)]
        specials = self._specials()
        if tokens[:len(specials)] == specials:
            tokens = tokens[len(specials):]
        repeated = sorted((t for t, n in collections.Counter(tokens).items() if n > 1), key=str)
        if repeated:
            raise ValueError(f"The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                             f"The repeated terms are: {repeated}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError(f"Found reserved mask token at unexpected location in `vocabulary`. Note that passed "
                             f"`vocabulary` does not need to include the OOV and mask tokens. Either remove all mask "
                             f"and OOV tokens, or include them only at the start of the vocabulary in precisely this "
                             f"order: {specials}. Received: mask_token={self.mask_token} at vocabulary index "
                             f"{tokens.index(self.mask_token)}")
        if self.max_tokens is not None and len(tokens) + len(specials) > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                             f"size is {len(tokens) + len(specials)}; `max_tokens` is {self.max_tokens}.")
        self._use(tokens)
        self._given = True

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Learn the vocabulary from `data` (an array, a list, or a dataset of batches)."""
        if self._given:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via `vocabulary` "
                             "argument or `set_vocabulary()` method.")
        counts: dict = {}
        batches = [data] if isinstance(data, (list, tuple, np.ndarray)) or hasattr(data, "asnumpy") else data
        for index, batch in enumerate(batches):
            if steps is not None and index >= steps:
                break
            for token in self._keys(batch).reshape(-1).tolist():
                counts[token] = counts.get(token, 0) + 1
        for special in (self.mask_token, self.oov_token):
            counts.pop(special, None)
        tokens = list(counts)
        if tokens:
            keys = np.array(tokens, dtype=object if self._strings else np.int64)
            order = np.lexsort((keys, np.array([counts[t] for t in tokens])))[::-1]
            if self.max_tokens:
                order = order[:self.max_tokens - len(self._specials())]
            tokens = [tokens[i] for i in order]
        self._use(tokens)

    def _use(self, tokens: list) -> None:
        """Take `tokens` as the vocabulary (after the special tokens), and the index of each."""
        self._vocabulary = tokens
        start = len(self._specials())
        self._index = {token: start + i for i, token in enumerate(tokens)}

    def get_vocabulary(self, include_special_tokens=True) -> list:
        return (self._specials() if include_special_tokens else []) + list(self._vocabulary)

    def vocabulary_size(self) -> int:
        return len(self._specials()) + len(self._vocabulary)

    # --- lookups -----------------------------------------------------------------------------

    def __call__(self, inputs, *args, **kwargs):
        from .. import symbolic

        if symbolic.any_symbolic(inputs):
            return super().__call__(inputs, *args, **kwargs)
        return self.call(inputs)  # (strings are numpy arrays: not a tensor's conversion)

    def call(self, inputs):
        import mindspore as ms

        keys = self._keys(inputs)
        start = len(self._specials())
        if self.invert:
            table = self._specials() + list(self._vocabulary)
            indices = keys.astype(np.int64)
            tokens = [table[i] if 0 <= i < len(table) else self.oov_token for i in indices.reshape(-1).tolist()]
            if self._strings:
                out = np.empty(len(tokens), dtype=object)
                out[:] = [t.encode(self.encoding) for t in tokens]
                return out.reshape(indices.shape)
            return ms.Tensor(np.array(tokens, dtype=np.int64).reshape(indices.shape))
        lookups = np.array(self._indices(keys.reshape(-1).tolist()), dtype=np.int64).reshape(keys.shape)
        if self.output_mode == "int":
            return ms.Tensor(lookups)
        return ms.Tensor(_encode(lookups, self.output_mode, self._depth()))

    def _indices(self, tokens: list) -> list[int]:
        """The index of each token: the mask 0 (-1 outside int mode: left out of an encoding), an
        unknown token the OOV index."""
        oov = len(self._specials()) - 1 if self.num_oov_indices else -1
        out = []
        for token in tokens:
            if self.mask_token is not None and token == self.mask_token:
                out.append(0 if self.output_mode == "int" else -1)
            elif token in self._index:
                out.append(self._index[token])
            elif oov < 0:
                raise ValueError(f"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                                 f"[{token!r}], consider setting `num_oov_indices=1`.")
            else:
                out.append(oov)
        return out

    def _depth(self) -> int:
        """The width of an encoding."""
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self._depth()
        shape = tuple(input_shape)
        if self.output_mode == "one_hot" and (not shape or shape[-1] != 1):
            shape = shape + (1,)
        return shape[:-1] + (depth,) if len(shape) > 1 else (depth,)

    def get_config(self):
        return {**super().get_config(), "vocabulary": list(self._vocabulary) or None}  # (adapted ones too)


def _encode(lookups: np.ndarray, mode: str, depth: int) -> np.ndarray:
    """Keras's categorical encodings of int lookups (its TF fast path): ranks up to 2 after a
    one-hot's added axis; a bin count along the last axis (0/1 for one_hot and multi_hot)."""
    x = lookups.reshape(1) if lookups.ndim == 0 else lookups
    if mode == "one_hot" and x.shape[-1] != 1:
        x = x[..., None]
    if x.ndim > 2:
        raise ValueError(f"When output_mode is not `'int'`, maximum supported output rank is 2. Received output_mode "
                         f"{mode} and input shape {lookups.shape}, which would result in output rank {x.ndim}.")
    out = _bincount(x.reshape(1, -1) if x.ndim == 1 else x, depth, binary=mode in ("one_hot", "multi_hot"))
    return out[0] if x.ndim == 1 else out


def _bincount(rows, depth: int, binary: bool, weights=None, dtype=np.int64) -> np.ndarray:
    """`(len(rows), depth)` of `dtype` (int64, as Keras 3 gives its encodings): each row's count of
    each index, or sum of its `weights` (0/1 when `binary`); negative indices are left out."""
    out = np.zeros((len(rows), depth), dtype=dtype)
    for r, row in enumerate(rows):
        row = np.asarray(row, dtype=np.int64)
        kept = row >= 0
        np.add.at(out[r], row[kept], 1 if weights is None else np.asarray(weights[r])[kept])
    return np.minimum(out, 1) if binary else out


class StringLookup(_IndexLookup):
    """`keras.layers.StringLookup`: strings to indices (or back with `invert=True`)."""

    _strings = True

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", **kwargs):
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, sparse=sparse, pad_to_max_tokens=pad_to_max_tokens,
                         encoding=encoding, **kwargs)


class IntegerLookup(_IndexLookup):
    """`keras.layers.IntegerLookup`: integer tokens to indices (or back with `invert=True`)."""

    _strings = False

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, **kwargs):
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, sparse=sparse, pad_to_max_tokens=pad_to_max_tokens, **kwargs)


class CategoryEncoding(Layer):
    """`keras.layers.CategoryEncoding`: integer indices as one-hot, multi-hot or count rows of
    width `num_tokens` (float32, the layer's dtype), as Keras 3 on TF computes them: up to rank
    2 a bin count per row (an index past `num_tokens` left out, a negative one refused, as TF's
    DenseBincount), above it a one-hot reduced over axis 1; `one_hot` drops a last axis of 1."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        output_mode = "multi_hot" if output_mode == "binary" else output_mode
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise NotImplementedError("CategoryEncoding: sparse outputs (MindSpore's dense tensors here)")
        self.num_tokens, self.output_mode, self.sparse = num_tokens, output_mode, sparse
        self._call_takes_training = False

    def __call__(self, inputs, count_weights=None, **kwargs):
        return self.call(inputs, count_weights)

    def _one_hot(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(x.shape + (self.num_tokens,), np.float32)
        inside = (x >= 0) & (x < self.num_tokens)
        out[(*np.nonzero(inside), x[inside])] = 1.0
        return out

    def call(self, inputs, count_weights=None):
        import mindspore as ms

        from ...tferrors import InvalidArgumentError

        if count_weights is not None and self.output_mode != "count":
            raise ValueError(f"`count_weights` is not used when `output_mode` is not `'count'`. Received "
                             f"`count_weights={count_weights}`.")
        x = np.asarray(inputs.asnumpy() if hasattr(inputs, "asnumpy") else inputs).astype(np.int64)
        weights = None if count_weights is None else np.asarray(
            count_weights.asnumpy() if hasattr(count_weights, "asnumpy") else count_weights, np.float32)
        x = x.reshape(1) if x.ndim == 0 else x
        if self.output_mode == "one_hot":
            return ms.Tensor(self._one_hot(x.reshape(x.shape[:-1]) if x.ndim > 1 and x.shape[-1] == 1 else x))
        if x.ndim <= 2:  # (Keras's TF fast path: a bin count of each row)
            if (x < 0).any():
                raise InvalidArgumentError("Input arr must be non-negative!")
            rows = x.reshape(1, -1) if x.ndim == 1 else x
            inside = rows < self.num_tokens  # (past `num_tokens`: left out, as TF's bin count)
            out = _bincount([row[kept] for row, kept in zip(rows, inside)], self.num_tokens,
                            self.output_mode == "multi_hot", None if weights is None else
                            [w[kept] for w, kept in zip(weights.reshape(rows.shape), inside)], np.float32)
            return ms.Tensor(out[0] if x.ndim == 1 else out)
        encoded = self._one_hot(x)
        if weights is not None:
            encoded = encoded * weights[..., None]
        return ms.Tensor(encoded.max(axis=1) if self.output_mode == "multi_hot" else encoded.sum(axis=1))

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if not shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and (shape[-1] != 1 or len(shape) == 1):
            return shape + (self.num_tokens,)
        return shape[:-1] + (self.num_tokens,)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode,
                "sparse": self.sparse}


_STRIP = re.compile(rb'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')  # Keras's punctuation


class TextVectorization(Layer):
    """`keras.layers.TextVectorization`: Keras's standardization (TF's ASCII lower-casing, its
    punctuation), whitespace or character splitting, n-grams (all of each width, in order) and a
    `StringLookup` with the empty string as mask: int sequences padded with 0 (to
    `output_sequence_length` or the batch's longest) or multi-hot/count rows (int64, as Keras 3)."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", **kwargs):
        super().__init__(**kwargs)
        if callable(split):
            raise NotImplementedError("TextVectorization: a callable `split` gives TF's ragged tensors, which MindSpore "
                                      "has not; give one of Keras's names here")
        if not callable(standardize) and standardize not in (None, "lower", "strip_punctuation",
                                                             "lower_and_strip_punctuation"):
            raise ValueError(f"Invalid value for argument `standardize`. Received: standardize={standardize}")
        if split not in (None, "whitespace", "character"):
            raise ValueError(f"Invalid value for argument `split`. Received: split={split}")
        if ragged:
            raise NotImplementedError("TextVectorization: ragged outputs (MindSpore has no ragged tensor)")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'. Received "
                             f"output_sequence_length={output_sequence_length}.")
        if not (ngrams is None or isinstance(ngrams, int) or isinstance(ngrams, (tuple, list))
                and all(isinstance(n, int) for n in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        self.standardize, self.split, self.encoding = standardize, split, encoding
        self.ngrams = ngrams
        self._widths = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else (
            tuple(ngrams) if ngrams is not None else None)
        self.output_mode, self.output_sequence_length = output_mode, output_sequence_length
        if output_mode not in ("int", "multi_hot", "count"):
            raise NotImplementedError(f"TextVectorization: output_mode {output_mode!r} keeps TensorFlow")
        self._lookup = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                    pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
                                    sparse=sparse, encoding=encoding)
        self._call_takes_training = False

    def _texts(self, inputs) -> tuple[list[bytes], tuple]:
        array = np.asarray(inputs.asnumpy() if hasattr(inputs, "asnumpy") else inputs, dtype=object)
        if callable(self.standardize):  # (as Keras: on the input as given, text as bytes, `tfstrings` its functions)
            from ... import tfstrings

            array = tfstrings.texts(self.standardize(tfstrings.texts(array)))
        if array.ndim > 1:
            if array.shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the input rank must be 1 or the "
                                 f"last shape dimension must be 1. Received: inputs.shape={array.shape} with "
                                 f"rank={array.ndim}")
            array = array.reshape(array.shape[:-1])
        texts = [v if isinstance(v, bytes) else str(v).encode(self.encoding) for v in array.reshape(-1)]
        return texts, array.shape

    def _tokens(self, text: bytes) -> list[str]:
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            text = text.lower()  # (bytes: ASCII letters only, as tf.strings.lower)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = _STRIP.sub(b"", text)
        if self.split == "whitespace":
            pieces = text.split()
        elif self.split == "character":
            pieces = [c.encode(self.encoding) for c in text.decode(self.encoding)]
        else:
            pieces = [text]
        if self._widths is not None:
            pieces = [b" ".join(pieces[i:i + width]) for width in self._widths
                      for i in range(len(pieces) - width + 1)]
        return [p.decode(self.encoding) for p in pieces]

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Learn the vocabulary from the tokens of `data` (strings, or a dataset of batches of them)."""
        batches = [data] if isinstance(data, (list, tuple, np.ndarray)) else data
        tokens = []
        for index, batch in enumerate(batches):
            if steps is not None and index >= steps:
                break
            texts, _ = self._texts(batch)
            tokens += [token for text in texts for token in self._tokens(text)]
        self._lookup.adapt(np.array(tokens, dtype=object) if tokens else np.zeros(0, dtype=object))

    def get_vocabulary(self, include_special_tokens=True) -> list:
        return self._lookup.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        return self._lookup.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None) -> None:
        self._lookup.set_vocabulary(vocabulary)

    def __call__(self, inputs, *args, **kwargs):
        return self.call(inputs)  # (strings are numpy arrays: not a tensor's conversion)

    def call(self, inputs):
        import mindspore as ms

        texts, shape = self._texts(inputs)
        rows = [self._lookup._indices(self._tokens(text)) for text in texts]
        if self.output_mode == "int":
            length = self.output_sequence_length
            if length is None:
                length = max((len(r) for r in rows), default=0)
            out = np.zeros((len(rows), length), dtype=np.int64)
            for r, row in enumerate(rows):
                row = row[:length]
                out[r, :len(row)] = row
            return ms.Tensor(out.reshape(shape + (length,)))
        out = _bincount(rows, self._lookup._depth(), binary=self.output_mode == "multi_hot")
        return ms.Tensor(out.reshape(shape + out.shape[-1:]))

    def get_config(self):
        return {**super().get_config(), "vocabulary": self.get_vocabulary(False) or None}
