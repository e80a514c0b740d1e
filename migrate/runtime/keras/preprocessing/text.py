"""`keras.preprocessing.text`: Keras 1's `Tokenizer` and word-splitting helpers.

A port of Keras 3's legacy module (``keras/src/legacy/preprocessing/text.py``), plain Python
and numpy: the same words, indices, counts, matrices and JSON. ``one_hot`` and
``hashing_trick`` without ``"md5"`` hash with Python's ``hash``, which changes from one
process to the next unless ``PYTHONHASHSEED`` is set, as in Keras.
"""

from __future__ import annotations

import collections
import hashlib
import json
import warnings

import numpy as np

__all__ = ["Tokenizer", "hashing_trick", "one_hot", "text_to_word_sequence", "tokenizer_from_json"]

_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=_FILTERS, lower=True, split=" "):
    """The words of a text: lower-cased, the ``filters`` characters made separators, split."""
    if lower:
        input_text = input_text.lower()
    translate_map = str.maketrans({c: split for c in filters})
    input_text = input_text.translate(translate_map)
    return [i for i in input_text.split(split) if i]


def one_hot(input_text, n, filters=_FILTERS, lower=True, split=" ", analyzer=None):
    """Each word's index in ``[1, n)`` by Python's ``hash``."""
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower, split=split,
                         analyzer=analyzer)


def hashing_trick(text, n, hash_function=None, filters=_FILTERS, lower=True, split=" ", analyzer=None):
    """Each word's index in ``[1, n)`` by ``hash_function`` (Python's ``hash``, ``"md5"`` or a function)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":

        def hash_function(w):
            return int(hashlib.md5(w.encode()).hexdigest(), 16)

    if analyzer is None:
        seq = text_to_word_sequence(text, filters=filters, lower=lower, split=split)
    else:
        seq = analyzer(text)
    return [(hash_function(w) % (n - 1) + 1) for w in seq]


class Tokenizer:
    """A vocabulary fit on texts: words indexed from 1 by falling count, texts to index sequences,
    sequences to texts, and both to ``(texts, num_words)`` matrices."""

    def __init__(self, num_words=None, filters=_FILTERS, lower=True, split=" ", char_level=False, oov_token=None,
                 analyzer=None, **kwargs):
        if "nb_words" in kwargs:
            warnings.warn("The `nb_words` argument in `Tokenizer` has been renamed `num_words`.", stacklevel=2)
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {str(kwargs)}")
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.filters = filters
        self.split = split
        self.lower = lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs = collections.defaultdict(int)
        self.word_index = {}
        self.index_word = {}
        self.analyzer = analyzer

    def _words(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [elem.lower() for elem in text] if isinstance(text, list) else text.lower()
            return text
        if self.analyzer is None:
            return text_to_word_sequence(text, filters=self.filters, lower=self.lower, split=self.split)
        return self.analyzer(text)

    def fit_on_texts(self, texts):
        for text in texts:
            self.document_count += 1
            seq = self._words(text)
            for w in seq:
                if w in self.word_counts:
                    self.word_counts[w] += 1
                else:
                    self.word_counts[w] = 1
            for w in set(seq):
                self.word_docs[w] += 1
        wcounts = list(self.word_counts.items())
        wcounts.sort(key=lambda x: x[1], reverse=True)  # (stable: ties keep the order words were first seen)
        sorted_voc = [] if self.oov_token is None else [self.oov_token]
        sorted_voc.extend(wc[0] for wc in wcounts)
        # (index 0 is never a word's: it is what padding fills with)
        self.word_index = dict(zip(sorted_voc, list(range(1, len(sorted_voc) + 1))))
        self.index_word = {c: w for w, c in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        num_words = self.num_words
        oov_token_index = self.word_index.get(self.oov_token)
        for text in texts:
            vect = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None:
                    if num_words and i >= num_words:
                        if oov_token_index is not None:
                            vect.append(oov_token_index)
                    else:
                        vect.append(i)
                elif self.oov_token is not None:
                    vect.append(oov_token_index)
            yield vect

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        num_words = self.num_words
        oov_token_index = self.word_index.get(self.oov_token)
        for seq in sequences:
            vect = []
            for num in seq:
                word = self.index_word.get(num)
                if word is not None:
                    if num_words and num >= num_words:
                        if oov_token_index is not None:
                            vect.append(self.index_word[oov_token_index])
                    else:
                        vect.append(word)
                elif self.oov_token is not None:
                    vect.append(self.index_word[oov_token_index])
            yield " ".join(vect)

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """A float64 ``(len(sequences), num_words)`` matrix: per index its ``"binary"`` presence,
        ``"count"``, ``"freq"`` or ``"tfidf"`` weight."""
        if not self.num_words:
            if self.word_index:
                num_words = len(self.word_index) + 1
            else:
                raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        else:
            num_words = self.num_words
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            if not seq:
                continue
            counts = collections.defaultdict(int)
            for j in seq:
                if j >= num_words:
                    continue
                counts[j] += 1
            for j, c in list(counts.items()):
                if mode == "count":
                    x[i][j] = c
                elif mode == "freq":
                    x[i][j] = c / len(seq)
                elif mode == "binary":
                    x[i][j] = 1
                elif mode == "tfidf":
                    # (weighting scheme 2 of https://en.wikipedia.org/wiki/Tf%E2%80%93idf, as Keras)
                    tf = 1 + np.log(c)
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[i][j] = tf * idf
                else:
                    raise ValueError("Unknown vectorization mode:", mode)
        return x

    def get_config(self):
        return {
            "num_words": self.num_words,
            "filters": self.filters,
            "lower": self.lower,
            "split": self.split,
            "char_level": self.char_level,
            "oov_token": self.oov_token,
            "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts),
            "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs),
            "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs):
        """Keras's JSON of the tokenizer, which ``tokenizer_from_json`` (Keras's or this) reads."""
        return json.dumps({"class_name": self.__class__.__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string):
    """A ``Tokenizer`` from ``to_json``'s string (Keras's too)."""
    tokenizer_config = json.loads(json_string)
    config = tokenizer_config.get("config")
    word_counts = json.loads(config.pop("word_counts"))
    word_docs = json.loads(config.pop("word_docs"))
    index_docs = json.loads(config.pop("index_docs"))
    # (JSON keys are strings: the integer indices come back as such)
    index_docs = {int(k): v for k, v in index_docs.items()}
    index_word = json.loads(config.pop("index_word"))
    index_word = {int(k): v for k, v in index_word.items()}
    word_index = json.loads(config.pop("word_index"))
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = word_counts
    tokenizer.word_docs = word_docs
    tokenizer.index_docs = index_docs
    tokenizer.word_index = word_index
    tokenizer.index_word = index_word
    return tokenizer
