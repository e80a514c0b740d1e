"""Keras's Conv2DTranspose in `mk`, values and gradients (the input's first, then the weights')
against Keras on the same weights and inputs, with as many and with fewer filters than input
channels: a transposed convolution inside a model (a DCGAN's generator) needs its input's
gradient, which MindSpore computes from the primitive's own channel count. (No `tanh` here:
MindSpore's CPU kernel is off by up to 1e-4 where |x| > 4, TF's by 6e-8, which its saturated
gradient there turns into a relative difference of this test's outputs.)"""

import numpy as np
import pytest
from keras_helpers import assert_case_is_kerass, keras_cases

pytest.importorskip("mindspore")

pytestmark = pytest.mark.tf

CASES = '''
def fewer_filters_same_s2(K):
    return K.Sequential([K.Input((5, 6, 4)), K.layers.Conv2DTranspose(1, 5, strides=2, padding="same")])


def more_filters_valid(K):
    return K.Sequential([K.Input((5, 6, 4)), K.layers.Conv2DTranspose(6, (3, 2), activation="relu")])


def same_filters_same_s3_k2(K):
    return K.Sequential([K.Input((5, 6, 4)), K.layers.Conv2DTranspose(4, 2, strides=3, padding="same")])


def generator_head(K):
    # The DCGAN notebook's generator tail: Dense -> reshape -> two transposed convolutions.
    return K.Sequential([K.Input((5, 6, 4)), K.layers.Conv2DTranspose(3, 5, strides=2, padding="same"),
                         K.layers.LeakyReLU(), K.layers.Conv2DTranspose(1, 5, strides=2, padding="same",
                                                                        activation="sigmoid")])
'''
NAMES = ["fewer_filters_same_s2", "more_filters_valid", "same_filters_same_s3_k2", "generator_head"]


def _inputs():
    return np.random.default_rng(5).normal(size=(2, 5, 6, 4)).astype(np.float32)


@pytest.fixture(scope="module")
def keras():
    return keras_cases(CASES, NAMES, _inputs(), gradients=True)


@pytest.mark.parametrize("name", NAMES)
def test_conv2d_transpose_gives_kerass_values_and_gradients(name, keras):
    assert_case_is_kerass(CASES, name, keras, _inputs(), rtol=1e-4, atol=1e-5)
