"""The math rules (TFM2xx) compute what TF computes.

Each case is a TF expression over a few small arrays. TF evaluates it in a subprocess
(TF and MindSpore are not loaded into one process); the expression is converted by
``migrate`` and the converted code runs here on MindSpore tensors holding the same
arrays. Values, shapes and dtypes must agree; the dtype differences a rule's note
states are listed in ``DTYPE_DIFFERENCES``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from migrate.rules import load_rules
from tests.helpers import convert

ms = pytest.importorskip("mindspore")
if importlib.util.find_spec("tensorflow") is None:  # TF runs in a subprocess only: loaded next to MindSpore it crashes
    pytest.skip("TensorFlow is not installed", allow_module_level=True)

RNG = np.random.default_rng(3)
INPUTS = {
    "f": RNG.normal(size=(3, 4)).astype(np.float32),
    "g": RNG.normal(size=(3, 4)).astype(np.float32),
    "pos": RNG.uniform(0.5, 3.0, size=(3, 4)).astype(np.float32),
    "half": np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4], dtype=np.float32),
    "i": RNG.integers(-5, 6, size=(3, 4)).astype(np.int32),
    "j": RNG.integers(1, 4, size=(3, 4)).astype(np.int32),
    "m": RNG.uniform(size=(3, 4)) > 0.5,
    "b3": RNG.normal(size=(2, 3, 4)).astype(np.float32),
    "c3": RNG.normal(size=(2, 4, 5)).astype(np.float32),
    "big": (RNG.normal(size=(3, 4)) * 40).astype(np.float32),
    "labels": np.array([0, 3, 1], dtype=np.int32),
    "labels64": np.array([2, 0, 1], dtype=np.int64),
    "labels8": np.array([1, 0, 2, 5], dtype=np.uint8),
    "labels3": RNG.integers(0, 4, size=(2, 3)).astype(np.int32),
    "probs": np.array([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]], dtype=np.float32),
    "col": RNG.normal(size=(3, 1, 4)).astype(np.float32),
    "img": RNG.integers(0, 256, size=(2, 5, 6, 3)).astype(np.uint8),
    "imgf": RNG.uniform(size=(5, 6, 3)).astype(np.float32),
    "x4": RNG.normal(size=(2, 7, 6, 3)).astype(np.float32),
    "k4": RNG.normal(size=(3, 3, 3, 4)).astype(np.float32),
    "dk": RNG.normal(size=(3, 2, 3, 2)).astype(np.float32),
    "x3": RNG.normal(size=(2, 9, 3)).astype(np.float32),
    "k3": RNG.normal(size=(3, 3, 5)).astype(np.float32),
    "bias3": RNG.normal(size=(3,)).astype(np.float32),
    "dup": np.array([3, 1, 3, 2, 1, 7, 3], dtype=np.int32),
    "sig": RNG.normal(size=(2, 50)).astype(np.float32),
    "sig64": RNG.normal(size=(2, 50)),
}

# name: TF expression (inputs are tensors bound to the names in INPUTS)
CASES = {
    # TFM201 reductions
    "reduce_sum_all": "tf.reduce_sum(f)",
    "reduce_sum_axis": "tf.reduce_sum(f, axis=1)",
    "reduce_sum_neg_keep": "tf.reduce_sum(f, axis=-1, keepdims=True)",
    "reduce_sum_list": "tf.reduce_sum(b3, axis=[0, 2])",
    "reduce_sum_int": "tf.reduce_sum(i, 0)",
    "reduce_mean_all": "tf.reduce_mean(f)",
    "reduce_mean_axis_keep": "tf.math.reduce_mean(f, axis=0, keepdims=True)",
    "reduce_mean_int": "tf.reduce_mean(i, axis=1)",
    "reduce_max": "tf.reduce_max(f, axis=1)",
    "reduce_max_all": "tf.reduce_max(f)",
    "reduce_min_keep": "tf.reduce_min(b3, axis=[1, 2], keepdims=True)",
    "reduce_prod": "tf.reduce_prod(pos, axis=0)",
    "reduce_any": "tf.reduce_any(m, axis=1)",
    "reduce_all": "tf.reduce_all(m)",
    # TFM202/203 cast and dtypes
    "cast_float_int": "tf.cast(f * 3.0, tf.int32)",
    "cast_string": "tf.cast(i, 'float32')",
    "cast_bool": "tf.cast(m, tf.float32)",
    "cast_keyword": "tf.cast(x=i, dtype=tf.float16)",
    "cast_int64": "tf.dtypes.cast(i, tf.int64)",
    # TFM204 shape
    "shape": "tf.shape(b3)",
    "shape_item": "tf.shape(b3)[0] * 2",
    "shape_times": "tf.shape(f) * 2",
    # TFM205 unary
    "square": "tf.square(f)",
    "square_int": "tf.square(i)",
    "sqrt": "tf.sqrt(pos)",
    "rsqrt": "tf.math.rsqrt(pos)",
    "exp": "tf.exp(f)",
    "expm1": "tf.math.expm1(f)",
    "log": "tf.math.log(pos)",
    "log1p": "tf.math.log1p(pos)",
    "abs": "tf.abs(f)",
    "abs_int": "tf.abs(i)",
    "sign": "tf.sign(f)",
    "negative": "tf.negative(f)",
    "floor": "tf.floor(f * 3)",
    "ceil": "tf.math.ceil(f * 3)",
    "round_half_even": "tf.round(half)",
    "reciprocal": "tf.math.reciprocal(pos)",
    "sin_cos": "tf.sin(f) + tf.math.cos(f)",
    "saturate_uint8": "tf.saturate_cast(big * 10, tf.uint8)",
    "saturate_int32": "tf.saturate_cast(big * 1e8, tf.int32)",
    "saturate_int_to_int": "tf.saturate_cast(i * 40, tf.int8)",
    "saturate_float16": "tf.dtypes.saturate_cast(big * 3000, tf.float16)",
    "scalar_mul": "tf.scalar_mul(-1, i) + tf.math.scalar_mul(2, i)",
    "scalar_mul_float": "tf.scalar_mul(0.5, f)",
    "matvec": "tf.linalg.matvec(b3, f[0])",
    "matvec_batched": "tf.linalg.matvec(b3, c3[:, :, 0], a_is_sparse=False)",
    "tan_atan": "tf.tan(f) + tf.math.atan(big)",
    "asin_acos": "tf.asin(f / 4) + tf.math.acos(f / 4)",
    "hyperbolic": "tf.sinh(f) + tf.math.cosh(f) + tf.atanh(f / 4)",
    "inverse_hyperbolic": "tf.math.asinh(big) + tf.acosh(pos + 1)",
    "erf": "tf.math.erf(f)",
    "sigmoid": "tf.sigmoid(f)",
    "nn_sigmoid": "tf.nn.sigmoid(big)",
    "tanh": "tf.math.tanh(f)",
    "is_nan": "tf.math.is_nan(f / f)",
    "is_finite": "tf.math.is_finite(f / 0.0)",
    "logical_not": "tf.logical_not(m)",
    # TFM206 binary
    "maximum": "tf.maximum(f, g)",
    "maximum_scalar": "tf.maximum(f, 0.0)",
    "minimum_scalar_first": "tf.minimum(0.5, f)",
    "add": "tf.add(f, g)",
    "subtract": "tf.subtract(f, g)",
    "multiply_broadcast": "tf.multiply(b3, f[0])",
    "pow": "tf.pow(pos, 1.5)",
    "equal": "tf.equal(i, j)",
    "not_equal": "tf.not_equal(i, 0)",
    "greater": "tf.greater(f, g)",
    "greater_equal": "tf.math.greater_equal(i, 1)",
    "less": "tf.less(f, 0.0)",
    "less_equal": "tf.less_equal(i, j)",
    "logical_and_or": "tf.logical_or(tf.logical_and(m, f > 0), f < -1)",
    "floordiv": "tf.math.floordiv(i, j)",
    "floormod": "tf.math.floormod(i, j)",
    # TFM207 matmul
    "matmul": "tf.matmul(f, tf.transpose(g, [1, 0]))",
    "matmul_batched": "tf.linalg.matmul(b3, c3)",
    "matmul_flags_false": "tf.matmul(f, tf.transpose(g, [1, 0]), transpose_a=False, transpose_b=False)",
    # TFM224 matmul with transpose_b
    "matmul_transpose_b": "tf.matmul(f, g, transpose_b=True)",
    "matmul_transpose_b_batched": "tf.linalg.matmul(b3, b3 * 2.0, transpose_b=True)",
    # TFM208 argmax
    "argmax_axis": "tf.argmax(f, axis=1)",
    "argmax_default": "tf.argmax(f)",
    "argmax_none": "tf.argmax(f, axis=None)",
    "argmin": "tf.math.argmin(f, -1)",
    # TFM209 one_hot
    "one_hot": "tf.one_hot(labels, 4)",
    "one_hot_values": "tf.one_hot(labels64, depth=3, on_value=0.9, off_value=0.05)",
    "one_hot_axis0": "tf.one_hot(labels, 4, axis=0)",
    "one_hot_out_of_range": "tf.one_hot(labels, 3)",
    "one_hot_uint8": "tf.one_hot(tf.constant(labels8), 6)",
    # TFM210-213 join, reshape, axes, transpose
    "concat": "tf.concat([f, g], axis=1)",
    "concat_neg": "tf.concat((f, g), -1)",
    "stack": "tf.stack([f, g])",
    "stack_axis": "tf.stack([f, g], axis=-1)",
    # TFM228-231 gather, gather_nd, tile, identity, clip_by_value; tf.math.mod (TFM206)
    "gather_rows": "tf.gather(f, [2, 0, 0])",
    "gather_axis": "tf.gather(b3, tf.constant([[3, 1], [0, 0]]), axis=-1)",
    "gather_axis_kw": "tf.gather(params=f, indices=labels, axis=1)",
    "gather_axis_none": "tf.gather(f, labels64, axis=None)",
    "gather_nd_elements": "tf.gather_nd(f, [[0, 1], [2, 3]])",
    "gather_nd_slices": "tf.gather_nd(b3, tf.constant([[1], [0]]))",
    "tile": "tf.tile(f, [2, 1])",
    "tile_tuple_3d": "tf.tile(b3, (1, 2, 3))",
    "tile_tensor_multiples": "tf.tile(f, tf.constant([1, 2]))",
    "identity": "tf.identity(i, name='copy')",
    "identity_reference": "list(map(tf.identity, [f]))[0]",  # TFM273
    "clip": "tf.clip_by_value(big, -10.0, 10.0)",
    "clip_int": "tf.clip_by_value(i, 0, 3)",
    "clip_tensor_bounds": "tf.clip_by_value(f, tf.zeros([4]), tf.ones([4]) * 0.5)",
    "mod": "tf.math.mod(i, 3)",
    # TFM237 cond (eager: one branch runs)
    "cond_true": "tf.cond(tf.reduce_sum(pos) > 0, lambda: pos * 2, lambda: pos - 1)",
    "cond_false": "tf.cond(tf.less(tf.reduce_min(pos), 0.0), lambda: pos * 2, lambda: pos - 1)",
    "cond_keywords": "tf.cond(pred=tf.reduce_max(i) > 2, true_fn=lambda: i + 1, false_fn=lambda: i)",
    # TFM242 sort / argsort (ties in i keep their order, as TF's)
    "sort": "tf.sort(f)",
    "sort_desc_axis0": "tf.sort(i, axis=0, direction='DESCENDING')",
    "argsort_ties": "tf.argsort(i)",
    "argsort_desc_ties": "tf.argsort(j, axis=-1, direction='DESCENDING')",
    "argsort_axis0": "tf.argsort(i, 0)",
    # TFM243 scatter_nd, TFM244 tensor_scatter_nd_*
    "scatter_nd_sum": "tf.scatter_nd(tf.constant([[1], [1], [2]]), tf.constant([1.0, 2.0, 3.0]), [4])",
    "scatter_nd_rows": "tf.scatter_nd(tf.constant([[2], [0]]), f[:2], tf.constant([3, 4]))",
    "tensor_scatter_update": "tf.tensor_scatter_nd_update(f, tf.constant([[0, 1], [2, 3]]), tf.constant([9.0, -9.0]))",
    "tensor_scatter_update_row": "tf.tensor_scatter_nd_update(f, tf.constant([[1]]), g[:1])",
    "tensor_scatter_add": "tf.tensor_scatter_nd_add(i, tf.constant([[0, 0], [0, 0]]), tf.constant([5, 6], tf.int32))",
    "tensor_scatter_max": "tf.tensor_scatter_nd_max(f, tf.constant([[0, 0]]), tf.constant([0.25]))",
    # TFM245 slice
    "slice": "tf.slice(b3, [0, 1, 1], [-1, 2, 2])",
    "slice_tensors": "tf.slice(f, tf.constant([1, 0]), tf.constant([2, -1]))",
    # TFM246 while_loop, TFM247 case (eager)
    "while_loop": "tf.while_loop(lambda k, acc: k < 3, lambda k, acc: (k + 1, acc + f[k]), (0, tf.zeros([4])))[1]",
    "while_loop_counter": "tf.while_loop(lambda k, acc: k < 10, lambda k, acc: (k + 1, acc * 2), [0, 1])[1]",
    "while_loop_max": "tf.while_loop(lambda x: tf.reduce_sum(x) < 1e6, lambda x: [x * 2], [pos], maximum_iterations=4)[0]",
    "case_first_true": "tf.case([(tf.reduce_sum(f) > 1e9, lambda: f), (tf.reduce_sum(pos) > 0, lambda: pos * 3)], default=lambda: g)",
    "case_default": "tf.case([(tf.reduce_min(pos) < 0, lambda: f)], default=lambda: g + 1)",
    "switch_case": "tf.switch_case(tf.constant(1), [lambda: f, lambda: g * 2, lambda: pos])",
    "switch_case_dict_default": "tf.switch_case(tf.constant(5), {0: lambda: f, 1: lambda: g}, default=lambda: pos + 1)",
    "switch_case_out_of_range_last": "tf.switch_case(tf.constant(-1), [lambda: f, lambda: g])",
    "sequence_mask": "tf.sequence_mask([1, 3, 0, 2])",
    # TFM295 TensorArray (eager)
    "tensor_array_write_stack": "tf.TensorArray(tf.float32, size=3).write(0, f[0]).write(2, g[1] * 2).stack()",
    "tensor_array_dynamic_read": "tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(4, f[1]).read(4)",
    "tensor_array_unstack_gather": "tf.TensorArray(tf.float32, size=3).unstack(b3[0]).gather([2, 0])",
    "tensor_array_split_concat": "tf.TensorArray(tf.float32, size=2).split(f, [1, 2]).concat()",
    "tensor_array_scatter_size": "tf.TensorArray(tf.int32, size=2, dynamic_size=True).scatter([3, 0], [[1, 2], [3, 4]]).size()",
    "tensor_array_empty_stack": "tf.TensorArray(tf.float32, size=0, element_shape=(2, 3)).stack()",
    "sequence_mask_maxlen_dtype": "tf.sequence_mask(tf.constant([[1, 4], [2, 0]]), maxlen=5, dtype=tf.float32)",
    # TFM248 fill, TFM249 broadcast_to, TFM205 rint
    "fill_float": "tf.fill([2, 3], -1.5)",
    "fill_int": "tf.fill((3,), 7)",
    "fill_tensor_dims": "tf.fill(tf.shape(f), 2.0)",
    "fill_tensor_value": "tf.fill([2, 2], tf.reduce_max(i))",
    "broadcast_to": "tf.broadcast_to(f[0], [2, 3, 4])",
    "broadcast_to_tensor_shape": "tf.broadcast_to(f[:, :1], tf.shape(f))",
    "broadcast_to_rank4": "tf.broadcast_to(col, [2, 3, 5, 4])",
    "rint": "tf.math.rint(half)",
    # TFM250 convert_image_dtype
    "image_uint8_to_float": "tf.image.convert_image_dtype(tf.cast(tf.abs(i) * 40, tf.uint8), tf.float32)",
    "image_float_to_uint8": "tf.image.convert_image_dtype(probs, tf.uint8)",
    "image_float_to_uint8_saturate": "tf.image.convert_image_dtype(big / 10.0, tf.uint8, saturate=True)",
    "image_int32_to_uint8": "tf.image.convert_image_dtype(i * 100000000, tf.uint8, saturate=True)",
    "image_uint8_to_int32": "tf.image.convert_image_dtype(tf.cast(j * 50, tf.uint8), tf.int32)",
    "image_float_to_float64": "tf.image.convert_image_dtype(pos, tf.float64)",
    "image_same": "tf.image.convert_image_dtype(f, tf.float32)",
    # TFM251 top_k, TFM252 stop_gradient, TFM253 divide_no_nan
    "top_k_values": "tf.math.top_k(i, k=3).values",
    "top_k_indices_ties": "tf.math.top_k(j, 2).indices",
    "top_k_unpacked": "tf.nn.top_k(f, k=2)[1]",
    "top_k_int64": "tf.math.top_k(f, k=1, index_type=tf.int64).indices",
    "stop_gradient": "tf.stop_gradient(f * 2.0)",
    "divide_no_nan": "tf.math.divide_no_nan(f, tf.where(m, g, tf.zeros_like(g)))",
    "divide_no_nan_int_zero": "tf.math.divide_no_nan(f, tf.cast(i, tf.float32))",
    # TFM238 unstack
    "unstack_first": "tf.unstack(b3)[1]",
    "unstack_axis": "tf.unstack(b3, axis=2)[3]",
    "unstack_num": "tf.unstack(f, num=4, axis=1)[0]",
    # TFM241 image resize
    "resize_up": "tf.image.resize(b3[..., None], [5, 7])",
    "resize_down_batch": "tf.image.resize(tf.reshape(c3, [2, 4, 5, 1]), (3, 2), method='bilinear')",
    "resize_nearest_up": "tf.image.resize(img, [7, 11], method='nearest')",
    "resize_nearest_down": "tf.image.resize(imgf, (3, 4), method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)",
    "resize_nearest_odd": "tf.image.resize(img[0], (4, 5), method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)",
    "resize_bilinear_constant": "tf.image.resize(imgf, (8, 9), method=tf.image.ResizeMethod.BILINEAR)",
    # TFM311 meshgrid
    "meshgrid_xy": "tf.meshgrid(tf.range(3), tf.range(4))[0]",
    "meshgrid_xy_second": "tf.meshgrid(bias3, probs, indexing='xy')[1]",
    "meshgrid_ij_three": "tf.meshgrid(labels, dup, labels, indexing='ij')[1]",
    "meshgrid_lists": "tf.meshgrid([1.0, 2.5], [3.0, 4.0, 5.0])[1]",
    "resize_bicubic_up": "tf.image.resize(imgf, [7, 11], method='bicubic')",
    "resize_bicubic_down_batch": "tf.image.resize(x4, (3, 4), method=tf.image.ResizeMethod.BICUBIC)",
    "resize_bicubic_uint8": "tf.image.resize(img, (9, 2), tf.image.ResizeMethod.BICUBIC)",
    # TFM240 pad (MindSpore's ops.pad), TFM323 (the other modes, paddings not written as numbers)
    "pad_constant": "tf.pad(b3, [[0, 1], [2, 0], [1, 1]])",
    "pad_leading_zero_pairs": "tf.pad(x4, [[0, 0], [0, 0], [2, 1], [0, 0]], 'CONSTANT', 2.0)",
    "pad_keywords": "tf.pad(paddings=((1, 0), (0, 0)), tensor=i, mode='constant')",
    "pad_constant_value": "tf.pad(f, [[1, 1], [0, 2]], constant_values=-3.5)",
    "pad_reflect": "tf.pad(b3, [[1, 1], [2, 1], [0, 3]], mode='REFLECT')",
    "pad_symmetric": "tf.pad(b3, [[2, 0], [0, 3], [4, 1]], 'symmetric')",
    "pad_int": "tf.pad(i, tf.constant([[1, 0], [0, 1]]))",
    # TFM239 split (a count: ops.tensor_split), TFM321 (sizes: ops.split), TFM322 (the rest)
    "split_count": "tf.split(f, 2, axis=1)[1]",
    "split_count_last_axis": "tf.split(b3, 4, -1)[3]",
    "split_sizes_literal": "tf.split(b3, [1, 2], axis=1)[1]",
    "split_sizes": "tf.split(b3, [1, -1, 1], 1)[1]",
    "split_count_name": "(lambda n: tf.split(f, n, axis=1))(2)[0]",
    "split_keywords": "tf.split(axis=0, num_or_size_splits=3, value=f)[2]",
    # TFM236 activations passed on as functions
    "relu_passed_on": "(lambda fn: fn(f))(tf.nn.relu)",
    "softmax_passed_on": "(lambda fn: fn(b3))(tf.nn.softmax)",
    "log_softmax_passed_on": "(lambda fn: fn(f))(tf.math.log_softmax)",
    "softplus_passed_on": "(lambda fn: fn(big))(tf.nn.softplus)",
    # TFM234 clip_by_norm, TFM235 clip_by_global_norm / global_norm
    "clip_by_norm": "tf.clip_by_norm(big, 5.0)",
    "clip_by_norm_axes": "tf.clip_by_norm(b3, 1.0, axes=[0, 2])",
    "clip_by_norm_unclipped": "tf.clip_by_norm(f, 1000.0)",
    "clip_by_global_norm": "tf.clip_by_global_norm([f, big], 3.0)[0][1]",
    "clip_by_global_norm_norm": "tf.clip_by_global_norm([f, big], 3.0)[1]",
    "global_norm": "tf.linalg.global_norm([f, b3])",
    # TFM226 add_n
    "add_n": "tf.add_n([f, g, pos])",
    "add_n_tuple_int": "tf.math.add_n((i, j))",
    "add_n_one": "tf.add_n([b3], name='one')",
    "reshape": "tf.reshape(b3, [-1, 4])",
    "reshape_tensor_dim": "tf.reshape(b3, [tf.shape(b3)[0], -1])",
    "reshape_shape_tensor": "tf.reshape(f, tf.shape(g))",
    "expand_dims": "tf.expand_dims(f, axis=-1)",
    "squeeze_all": "tf.squeeze(col)",
    "squeeze_axis": "tf.squeeze(col, axis=[1])",
    "transpose": "tf.transpose(b3, perm=[0, 2, 1])",
    # TFM214 constant
    "constant_float": "tf.constant(0.5)",
    "constant_list_float": "tf.constant([1.0, 2.0])",
    "constant_int_dtype": "tf.constant([1, 2], dtype=tf.int32)",
    "constant_string_dtype": "tf.constant([1, 2], 'float32')",
    "constant_numpy64": "tf.constant(np.ones(2))",
    "convert_to_tensor": "tf.convert_to_tensor(f)",
    "convert_to_tensor_dtype": "tf.convert_to_tensor([1, 2], dtype=tf.float32)",
    # TFM215 range
    "range_end": "tf.range(5)",
    "range_start_end_step": "tf.range(2, 10, 3)",
    "range_float": "tf.range(0.0, 1.0, 0.25)",
    "range_dtype": "tf.range(4, dtype=tf.float32)",
    "range_delta_kw": "tf.range(6, delta=2)",
    # TFM216/217 where
    "where": "tf.where(m, f, g)",
    "where_scalar": "tf.where(f > 0, f, 0.0)",
    "where_indices": "tf.where(m)",
    # TFM218/219 fill
    "zeros": "tf.zeros([2, 3])",
    "zeros_int": "tf.zeros(3, dtype=tf.int32)",
    "ones_tuple": "tf.ones((2, 2))",
    "ones_string_dtype": "tf.ones([2], 'int64')",
    "zeros_like": "tf.zeros_like(i)",
    "ones_like_dtype": "tf.ones_like(i, tf.float32)",
    # TFM220 activations
    "relu": "tf.nn.relu(f)",
    "relu6": "tf.nn.relu6(big)",
    "elu": "tf.nn.elu(f)",
    "selu": "tf.nn.selu(f)",
    "softplus": "tf.nn.softplus(big)",
    "math_softplus": "tf.math.softplus(f)",
    "silu": "tf.nn.silu(f)",
    "swish": "tf.nn.swish(f)",
    # TFM221 softmax
    "softmax": "tf.nn.softmax(big)",
    "softmax_axis0": "tf.nn.softmax(f, axis=0)",
    "log_softmax": "tf.nn.log_softmax(big, axis=-1)",
    "math_softmax_3d": "tf.math.softmax(b3, axis=1)",
    # TFM222/223 cross entropy
    "softmax_ce": "tf.nn.softmax_cross_entropy_with_logits(labels=probs, logits=big)",
    "softmax_ce_positional": "tf.nn.softmax_cross_entropy_with_logits(probs, f)",
    "softmax_ce_3d": "tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(b3), logits=b3 * 3)",
    "softmax_ce_axis0": "tf.nn.softmax_cross_entropy_with_logits(labels=tf.transpose(probs, [1, 0]), logits=tf.transpose(f, [1, 0]), axis=0)",
    "sparse_ce": "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=big)",
    "sparse_ce_int64": "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels64, logits=f)",
    "sparse_ce_3d": "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels3, logits=b3)",
    # TFM254 norm
    "norm_default": "tf.norm(f)",
    "norm_axis_keep": "tf.norm(b3, axis=-1, keepdims=True)",
    "norm_fro_pair": "tf.norm(b3, ord='fro', axis=[1, 2])",
    "norm_1_vector": "tf.norm(f, ord=1, axis=1)",
    "norm_inf_vector": "tf.norm(f, ord=np.inf, axis=0)",
    "norm_inf_all": "tf.norm(f, ord=np.inf)",
    "norm_1_matrix": "tf.norm(b3, ord=1, axis=(1, 2))",
    "norm_inf_matrix_keep": "tf.norm(b3, ord=np.inf, axis=(1, 2), keepdims=True)",
    "norm_p3": "tf.norm(f, ord=3)",
    "linalg_norm": "tf.linalg.norm(f, axis=1)",
    # TFM255 boolean_mask, count_nonzero
    "boolean_mask_full": "tf.boolean_mask(f, m)",
    "boolean_mask_rows": "tf.boolean_mask(f, f[:, 0] > 0)",
    "boolean_mask_axis": "tf.boolean_mask(b3, m[0, :3], axis=1)",
    "count_nonzero_all": "tf.math.count_nonzero(i)",
    "count_nonzero_axis_keep": "tf.math.count_nonzero(i, axis=1, keepdims=True)",
    "count_nonzero_bool": "tf.math.count_nonzero(m, 0)",
    "count_nonzero_dtype": "tf.math.count_nonzero(f > 0, dtype=tf.int32)",
    # TFM256, TFM257 leaky_relu, l2_loss
    "leaky_relu_default": "tf.nn.leaky_relu(f)",
    "leaky_relu_alpha": "tf.nn.leaky_relu(f, alpha=0.05)",
    "l2_loss": "tf.nn.l2_loss(b3)",
    # TFM258 size, rank
    "size": "tf.size(b3)",
    "size_int64": "tf.size(f, out_type=tf.int64)",
    "rank": "tf.rank(b3)",
    # TFM259 image geometry
    "flip_left_right": "tf.image.flip_left_right(img)",
    "flip_up_down": "tf.image.flip_up_down(imgf)",
    "crop_to_bounding_box": "tf.image.crop_to_bounding_box(img, 1, 2, 3, 3)",
    "pad_to_bounding_box": "tf.image.pad_to_bounding_box(imgf, 1, 2, 8, 9)",
    "resize_with_crop_or_pad_crop": "tf.image.resize_with_crop_or_pad(imgf, 2, 3)",
    "resize_with_crop_or_pad_pad": "tf.image.resize_with_crop_or_pad(img, 8, 9)",
    "resize_with_crop_or_pad_both": "tf.image.resize_with_crop_or_pad(img, 2, 9)",
    "rgb_to_grayscale_uint8": "tf.image.rgb_to_grayscale(img)",
    "rgb_to_grayscale_float": "tf.image.rgb_to_grayscale(imgf)",
    "grayscale_to_rgb": "tf.image.grayscale_to_rgb(imgf[:, :, :1])",
    "resize_with_pad_wide": "tf.image.resize_with_pad(imgf, 9, 4)",
    "resize_with_pad_tall_batch": "tf.image.resize_with_pad(imgf[None], 3, 11)",
    "resize_with_pad_nearest": "tf.image.resize_with_pad(img, 7, 7, method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)",
    "grayscale_to_rgb_batch": "tf.image.grayscale_to_rgb(tf.image.rgb_to_grayscale(img[None]))",
    # TFK191-TFK193 Keras's legacy backend helpers
    "k_sum": "tf.keras.backend.sum(f, axis=1)",
    "k_max_keep": "tf.keras.backend.max(b3, 1, True)",
    "k_min_all": "tf.keras.backend.min(f)",
    "k_square": "tf.keras.backend.square(f)",
    "k_sqrt_clips": "tf.keras.backend.sqrt(f)",
    "k_sqrt_nan": "tf.keras.backend.sqrt(tf.math.log(f))",
    "k_exp": "tf.keras.backend.exp(f)",
    "k_log": "tf.keras.backend.log(pos)",
    "k_abs": "tf.keras.backend.abs(i)",
    "k_sigmoid": "tf.keras.backend.sigmoid(f)",
    "k_flatten": "tf.keras.backend.flatten(b3)",
    "k_mean": "tf.keras.backend.mean(f, 1, True)",
    "k_mean_bool": "tf.keras.backend.mean(m, axis=0)",
    # TFM260 numpy_function, py_function
    "numpy_function": "tf.numpy_function(lambda a: a * 2 + 1, [f], tf.float32)",
    "numpy_function_list": "tf.numpy_function(lambda a, b: (a + b, (a > 0).astype(np.int32)), [f, g], [tf.float32, tf.int32])[1]",
    "py_function": "tf.py_function(lambda a: a * 3, [f], tf.float32)",
    # TFM261 argmax/argmin with output_type
    "argmax_output_type": "tf.argmax(f, axis=1, output_type=tf.int32)",
    "argmin_output_type": "tf.math.argmin(f, output_type=tf.int64)",
    # TFM262 divide
    "divide": "tf.divide(f, pos)",
    "divide_number": "tf.math.divide(f, 2.0)",
    "truediv": "tf.truediv(f, pos)",
    "divide_int": "tf.divide(i, j)",
    # TFM263 cumsum
    "cumsum": "tf.cumsum(f, axis=1)",
    "cumsum_default_int": "tf.math.cumsum(i)",
    "cumsum_flags_false": "tf.cumsum(f, 1, exclusive=False, reverse=False)",
    # TFM264 tensordot
    "tensordot_lists": "tf.tensordot(f, g, axes=[[1], [1]])",
    "tensordot_number": "tf.tensordot(f, c3[0], 1)",
    # TFM265 sigmoid cross-entropy (large logits: a naive formula overflows)
    "sigmoid_ce": "tf.nn.sigmoid_cross_entropy_with_logits(labels=probs, logits=big)",
    # TFM266 one_hot with dtype
    "one_hot_dtype_int": "tf.one_hot(labels, 4, dtype=tf.int32)",
    "one_hot_dtype_on_value": "tf.one_hot(labels, depth=4, on_value=2.0, dtype=tf.float32)",
    "one_hot_dtype_string": "tf.one_hot(labels, 4, dtype='float16')",
    # TFM267 constant with shape
    "constant_shape": "tf.constant(-1, shape=[2, 3], dtype=tf.int32)",
    "constant_shape_float": "tf.constant(0.5, shape=(3,))",
    "constant_shape_dtype_string": "tf.constant(2, 'float32', shape=[2, 2])",
    # TFM271 einsum and roll
    "einsum_batched": "tf.einsum('abc,acd->abd', b3, c3)",
    "einsum_transposed": "tf.einsum('ij,kj->ik', f, g)",
    "einsum_ellipsis": "tf.einsum('...j,kj->...k', b3, f)",
    "einsum_implicit_sum": "tf.linalg.einsum('ij->j', f)",
    "einsum_outer": "tf.einsum('bi,bj->bij', f, g)",
    "roll": "tf.roll(f, shift=1, axis=1)",
    "roll_axes": "tf.roll(b3, [1, -5], [0, 2])",
    # TFM274 tf.nn convolutions, pooling, moments, l2_normalize (channels last, TF's padding)
    "conv2d_same": "tf.nn.conv2d(x4, k4, strides=1, padding='SAME')",
    "conv2d_valid_strided": "tf.nn.conv2d(x4, k4, [1, 2, 2, 1], 'VALID')",
    "conv2d_same_strided": "tf.nn.conv2d(x4, k4, 2, 'SAME')",
    "conv2d_dilated": "tf.nn.conv2d(x4, k4, 1, 'SAME', dilations=2)",
    "conv2d_explicit": "tf.nn.conv2d(x4, k4, 1, [[0, 0], [1, 2], [0, 1], [0, 0]])",
    "conv1d": "tf.nn.conv1d(x3, k3, 2, 'SAME')",
    "depthwise_same": "tf.nn.depthwise_conv2d(x4, dk, [1, 1, 1, 1], 'SAME')",
    "depthwise_valid_strided": "tf.nn.depthwise_conv2d(x4, dk, strides=[1, 2, 2, 1], padding='VALID')",
    "max_pool_same": "tf.nn.max_pool(x4, 3, 2, 'SAME')",
    "max_pool2d_valid": "tf.nn.max_pool2d(x4, [1, 2, 2, 1], [1, 2, 2, 1], 'VALID')",
    "avg_pool_same": "tf.nn.avg_pool(x4, ksize=3, strides=2, padding='SAME')",
    "avg_pool2d_valid": "tf.nn.avg_pool2d(x4, (2, 3), 1, 'VALID')",
    "max_pool1d_same": "tf.nn.max_pool1d(x3, 2, 2, 'SAME')",
    "avg_pool_1d_same": "tf.nn.avg_pool(x3, 4, 1, 'SAME')",
    "moments_variance": "tf.nn.moments(x4, axes=[0, 1, 2])[1]",
    "moments_mean_keepdims": "tf.nn.moments(f, [1], keepdims=True)[0]",
    "l2_normalize_axis": "tf.math.l2_normalize(f, axis=1)",
    "l2_normalize_all": "tf.nn.l2_normalize(b3)",
    "l2_normalize_zero": "tf.math.l2_normalize(f * 0.0, 0)",
    # TFM275 bias_add
    "bias_add": "tf.nn.bias_add(x4, bias3)",
    "bias_add_nhwc": "tf.nn.bias_add(x4, bias3, data_format='NHWC')",
    # TFM276 TF 1's casts
    "to_float": "tf.compat.v1.to_float(i)",
    "to_int32": "tf.compat.v1.to_int32(f * 3)",
    "to_int64": "tf.compat.v1.to_int64(m)",
    "to_double": "tf.compat.v1.to_double(f)",
    # TFM277 transpose without perm
    "transpose_reversed_3d": "tf.transpose(b3)",
    "transpose_reversed_2d": "tf.transpose(f)",
    # TFM278 constant of a list or a value, with shape
    "constant_reshaped": "tf.constant([0.0, 0.0, 1.0, 1.0], dtype=tf.float32, shape=[1, 1, 4])",
    "constant_reshaped_int": "tf.constant([1, 2, 3, 4, 5, 6], shape=(2, 3))",
    "constant_positional_shape": "tf.constant(2, tf.int64, [2, 3])",
    "constant_filled_list": "tf.constant([7.5], shape=[2, 2])",
    "constant_reshaped_tensor": "tf.constant(half, shape=[2, 3])",
    "constant_reshaped_dtype_string": "tf.constant([[1, 2], [3, 4]], 'float64', shape=[4])",
    # TFM279 linspace
    "linspace": "tf.linspace(0.0, 1.0, 11)",
    "linspace_negative": "tf.linspace(-2.0, 3.0, 4)",
    # TFM280-TFM282 TF 1's resizing (legacy sampling)
    "resize_images_v1": "tf.compat.v1.image.resize_images(x4, [9, 11])",
    "resize_v1_aligned_down": "tf.compat.v1.image.resize(x4, [3, 4], align_corners=True)",
    "resize_v1_single_image": "tf.compat.v1.image.resize(imgf, [8, 3])",
    "resize_v1_nearest_constant": "tf.compat.v1.image.resize_images(img, [7, 8], method=tf.compat.v1.image.ResizeMethod.NEAREST_NEIGHBOR)",
    "resize_v1_bilinear_constant": "tf.compat.v1.image.resize(img, [4, 9], tf.compat.v1.image.ResizeMethod.BILINEAR)",
    "resize_bilinear_v1_half_pixel": "tf.compat.v1.image.resize_bilinear(x4, [5, 13], half_pixel_centers=True)",
    "resize_bilinear_v1": "tf.compat.v1.image.resize_bilinear(x4, [14, 3])",
    "resize_nearest_v1": "tf.compat.v1.image.resize_nearest_neighbor(img, [9, 4])",
    "resize_nearest_v1_aligned": "tf.compat.v1.image.resize_nearest_neighbor(img, [3, 11], align_corners=True)",
    "resize_nearest_v1_half_pixel": "tf.compat.v1.image.resize_nearest_neighbor(x4, [4, 13], half_pixel_centers=True)",
    "resize_bicubic_v1": "tf.compat.v1.image.resize_bicubic(x4, [9, 5])",
    "resize_bicubic_v1_aligned": "tf.compat.v1.image.resize_bicubic(x4, [3, 11], align_corners=True)",
    "resize_bicubic_v1_half_pixel": "tf.compat.v1.image.resize_bicubic(img, [5, 7], half_pixel_centers=True)",
    "resize_v1_bicubic_constant": "tf.compat.v1.image.resize(imgf, [6, 4], tf.compat.v1.image.ResizeMethod.BICUBIC)",
    # TFM283 unique
    "unique_values": "tf.unique(dup)[0]",
    "unique_index": "tf.unique(dup)[1]",
    "unique_counts": "tf.unique_with_counts(dup)[2]",
    "unique_index_int64": "tf.unique_with_counts(dup, out_idx=tf.int64)[1]",
    # TFM284 band_part
    "band_part_lower": "tf.linalg.band_part(b3, -1, 0)",
    "band_part_upper": "tf.linalg.band_part(f, 0, -1)",
    "band_part_band": "tf.linalg.band_part(f, 1, 2)",
    # TFM285 histogram_fixed_width
    "histogram_ints": "tf.histogram_fixed_width(tf.cast(img, tf.int32), [0, 255], nbins=16)",
    "histogram_floats_outside": "tf.histogram_fixed_width(big, [-20.0, 20.0], nbins=7)",
    "histogram_default_bins_int64": "tf.histogram_fixed_width(f, [-1.0, 1.0], dtype=tf.int64)",
    # TFM286 as_dtype
    "as_dtype_in_cast": "tf.cast(f, tf.as_dtype('float16'))",
    # TFM288 gather with batch_dims
    "gather_batch_dims": "tf.gather(b3, tf.constant([[2, 0], [1, 1]]), batch_dims=1)",
    "gather_batch_dims_axis": "tf.gather(b3, tf.constant([[3, 0, 3], [1, 2, 2]]), axis=2, batch_dims=1)",
    "gather_batch_dims_list": "tf.gather(f, [[1], [0], [3]], axis=1, batch_dims=1)",
    # TFM289 colour adjustments
    "adjust_brightness_float": "tf.image.adjust_brightness(imgf, 0.3)",
    "adjust_brightness_uint8": "tf.image.adjust_brightness(img, -0.2)",
    "adjust_contrast_float": "tf.image.adjust_contrast(imgf, 1.7)",
    "adjust_contrast_uint8_batch": "tf.image.adjust_contrast(img, 0.4)",
    "adjust_saturation_float": "tf.image.adjust_saturation(imgf, 2.5)",
    "adjust_saturation_uint8": "tf.image.adjust_saturation(img, 0.3)",
    "adjust_hue_float": "tf.image.adjust_hue(imgf, 0.2)",
    "adjust_hue_negative_uint8": "tf.image.adjust_hue(img, -0.45)",
    "adjust_hue_grey": "tf.image.adjust_hue(tf.ones([2, 2, 3]) * 0.5, 0.3)",
    # TFM317 signal, TFM318/319 complex values
    "rfft": "tf.signal.rfft(sig)",
    "rfft_cropped": "tf.signal.rfft(sig, fft_length=[32])",
    "rfft_padded": "tf.signal.rfft(sig, [64])",
    "rfft_float64": "tf.signal.rfft(sig64)",
    "irfft": "tf.signal.irfft(tf.signal.rfft(sig))",
    "irfft_length": "tf.signal.irfft(tf.signal.rfft(sig), fft_length=[40])",
    "rfft2d": "tf.signal.rfft2d(b3)",
    "irfft2d": "tf.signal.irfft2d(tf.signal.rfft2d(c3), [4, 5])",
    "fft": "tf.signal.fft(tf.complex(f, g))",
    "ifft": "tf.signal.ifft(tf.complex(f, g))",
    "fft2d_round_trip": "tf.signal.ifft2d(tf.signal.fft2d(tf.complex(b3, c3[:, :3, :4])))",
    "stft": "tf.signal.stft(sig, frame_length=16, frame_step=8)",
    "stft_pad_end": "tf.signal.stft(sig, 15, 7, fft_length=32, pad_end=True)",
    "stft_hamming": "tf.signal.stft(sig, 12, 5, window_fn=tf.signal.hamming_window)",
    "hann_odd": "tf.signal.hann_window(7)",
    "hann_even_symmetric": "tf.signal.hann_window(8, periodic=False)",
    "hann_even_periodic_float64": "tf.signal.hann_window(8, dtype=tf.float64)",
    "hamming": "tf.signal.hamming_window(10)",
    "frame": "tf.signal.frame(sig, 10, 4)",
    "frame_pad_end": "tf.signal.frame(sig, 10, 4, pad_end=True, pad_value=-1.0)",
    "real_and_imag": "tf.math.real(tf.complex(f, g)) + tf.math.imag(tf.dtypes.complex(g, f))",
    "real_of_real": "tf.math.real(f)",
    "imag_of_real": "tf.math.imag(f)",
    # TFM200: the real magnitude of what a complex-valued API makes (a spectrogram)
    "abs_of_stft": "tf.abs(tf.signal.stft(sig, frame_length=16, frame_step=8))",
    "abs_of_complex": "tf.math.abs(tf.complex(f, g))",
    # TFM316 image filters
    "total_variation_batch": "tf.image.total_variation(x4)",
    "total_variation_single": "tf.image.total_variation(imgf)",
    "total_variation_int": "tf.image.total_variation(tf.cast(img, tf.int32))",
    "sobel_edges": "tf.image.sobel_edges(x4)",
    # TFM320 image quality (more in tests/test_image_quality.py)
    "ssim_uint8": "tf.image.ssim(img, tf.reverse(img, [2]), 255, filter_size=3)",
    "psnr_float": "tf.image.psnr(imgf, imgf * 0.9 + 0.05, 1.0)",
    "ssim_multiscale": "tf.image.ssim_multiscale(tf.abs(x4), tf.abs(x4) * 0.8, 3.0, power_factors=(0.5, 0.5), "
                       "filter_size=3)",
    # TFM315 bitwise (and TFM205's invert)
    "bitwise_and": "tf.bitwise.bitwise_and(i, j)",
    "bitwise_or_xor": "tf.bitwise.bitwise_xor(tf.bitwise.bitwise_or(i, j), j)",
    "left_shift": "tf.bitwise.left_shift(i, j)",
    "right_shift_signed": "tf.bitwise.right_shift(i, j)",
    "left_shift_uint8": "tf.bitwise.left_shift(img, tf.constant(3, tf.uint8))",
    "right_shift_uint8": "tf.bitwise.right_shift(img, tf.constant(2, tf.uint8))",
    "invert": "tf.bitwise.invert(i)",
    "invert_uint8": "tf.bitwise.invert(img)",
    "rgb_to_hsv": "tf.image.rgb_to_hsv(imgf)",
    "hsv_round_trip": "tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(imgf))",
    # TFM290 no_op, TFM291 DType
    "no_op_is_none": "tf.constant(tf.no_op() is None)",
    "dtype_class": "tf.constant([isinstance(tf.float32, tf.dtypes.DType), isinstance(tf.int64, tf.DType), isinstance(3, tf.DType)])",
    # TFM292 TF 1's where, TFM293 TF 1's cond
    "where_v1_rows": "tf.compat.v1.where(tf.constant([True, False, True]), f, g)",
    "where_v1_same_shape": "tf.compat.v1.where(m, f, g)",
    "where_v1_indices": "tf.compat.v1.where(m)",
    "cond_v1_unpacks": "tf.compat.v1.cond(tf.constant(True), lambda: [f * 2], lambda: [g])",
    "cond_v1_strict": "tf.compat.v1.cond(tf.constant(False), lambda: [f], lambda: [g + 1], strict=True)[0]",
    "cond_v1_old_names": "tf.compat.v1.cond(tf.reduce_sum(f) > 100.0, fn1=lambda: f, fn2=lambda: g)",
    # TFM287 crop_and_resize
    "crop_and_resize": "tf.image.crop_and_resize(x4, [[0.1, 0.2, 0.8, 0.9], [-0.2, 0.0, 1.1, 1.0]], [0, 1], (4, 5))",
    "crop_and_resize_nearest": "tf.image.crop_and_resize(img, [[0.0, 0.0, 0.5, 1.0]], [1], [3, 3], method='nearest')",
    # TFM296 confusion_matrix
    "confusion_matrix": "tf.math.confusion_matrix(tf.constant([0, 2, 1, 2, 4]), tf.constant([0, 1, 1, 2, 3]))",
    "confusion_matrix_weighted": "tf.math.confusion_matrix([1, 0, 1], [1, 1, 0], num_classes=3, weights=[2.5, 1.0, 0.5], dtype=tf.float32)",
    # TFM297/TFM298 reduce_std, reduce_variance
    "reduce_std_all": "tf.math.reduce_std(b3)",
    "reduce_std_axis_keepdims": "tf.math.reduce_std(b3, 1, True)",
    "reduce_variance_negative_axis": "tf.math.reduce_variance(big, axis=-1)",
    "reduce_variance_axes_list": "tf.math.reduce_variance(b3, axis=[0, 2], keepdims=True)",
    "reduce_std_axes_tuple": "tf.math.reduce_std(x4, axis=(1, 2))",
    # TFM299 repeat, TFM300 reverse, TFM301 embedding_lookup
    "repeat_flat": "tf.repeat(i, 2)",
    "repeat_axis": "tf.repeat(f, repeats=3, axis=1)",
    "repeat_counts": "tf.repeat(f, [1, 0, 2], axis=0)",
    "repeat_tensor_counts": "tf.repeat(labels, tf.constant([2, 1, 3]), axis=0)",
    "reverse": "tf.reverse(b3, [1])",
    "reverse_axes": "tf.reverse(b3, axis=(0, -1))",
    "embedding_lookup": "tf.nn.embedding_lookup(tf.transpose(f), labels3)",
    # TFM302/TFM303 compat.v1.gather, TFM304 diag_part, TFM305 vectorized_map
    "gather_v1_axis": "tf.compat.v1.gather(f, labels, axis=1)",
    "gather_v1_positional": "tf.compat.v1.gather(f, labels, None, 'rows', 1)",
    "gather_v1_list": "tf.compat.v1.gather(f, [2, 0])",
    "diag_part_wide": "tf.linalg.diag_part(f)",
    "diag_part_batch": "tf.linalg.diag_part(c3)",
    "matrix_diag_part": "tf.compat.v1.matrix_diag_part(b3)",
    "vectorized_map": "tf.vectorized_map(lambda t: t * 2.0 + tf.reduce_sum(t), f)",
    "vectorized_map_tuple": "tf.vectorized_map(lambda p: p[0] * p[1] - p[1], (f, g))",
    "map_fn": "tf.map_fn(lambda t: tf.reduce_max(t) - t, b3)",
    "map_fn_tuple_result": "tf.map_fn(lambda p: (p[0] + 1.0, tf.reduce_sum(p[1])), (f, g), "
                           "fn_output_signature=(tf.float32, tf.float32))[1]",
    "map_fn_int": "tf.compat.v1.map_fn(lambda r: r * 2, i)",
    "map_fn_number_signature": "tf.map_fn(lambda r: 1, f, fn_output_signature=tf.float32)",
    # Keras's backend helpers that are one TF call (migrate/engine/keras_backend.py)
    "k_equal": "tf.keras.backend.equal(i, j)",
    "k_greater_equal": "tf.keras.backend.greater_equal(f, g)",
    "k_permute": "tf.keras.backend.permute_dimensions(b3, (2, 0, 1))",
    "k_stack": "tf.keras.backend.stack([f, g], axis=1)",
    "k_gather": "tf.keras.backend.gather(f, labels % 3)",
    "k_prod": "tf.keras.backend.prod(pos, 1, True)",
    "k_cumsum": "tf.keras.backend.cumsum(f, 1)",
    "k_round": "tf.keras.backend.round(half)",
    "k_softplus": "tf.keras.backend.softplus(f)",
    "k_l2_normalize": "tf.keras.backend.l2_normalize(f, axis=1)",
    # TFM306 py_func, TFT121 dimension_value
    "py_func": "tf.compat.v1.py_func(lambda a: a * 2.0 + 1.0, [f], tf.float32)",
    "dimension_value": "tf.fill([2], tf.compat.dimension_value(f.shape[1]))",
    # TFM307 functions handed on, TFM308 dynamic_stitch, TFK198 TF 1's piecewise_constant
    "square_reference": "tf.map_fn(tf.math.square, f)",
    "abs_reference": "tf.vectorized_map(tf.abs, i)",
    "dynamic_stitch": "tf.dynamic_stitch([labels, tf.constant([5, 4])], [f[:, 0], g[:2, 1]])",
    "dynamic_stitch_rows": "tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([1])], [f[:2], g[:1]])",
    "scatter_nd_lists": "tf.scatter_nd(indices=[[1]], updates=[f], shape=tf.concat([[2], tf.shape(f)], axis=0))",
    "scatter_nd_number_lists": "tf.scatter_nd([[0], [2], [0]], [1.5, 2.0, 3.0], [4])",
    # TFT130-TFT132: a tensor's shape asked as TF's TensorShape
    "shape_as_list": "tf.reshape(b3, [b3.shape.as_list()[0] * b3.get_shape().as_list()[1], -1])",
    "get_shape_item": "tf.reshape(x4, [-1, x4.get_shape()[-1]])",
    "shape_ndims": "tf.fill([b3.shape.ndims, x4.get_shape().ndims], 1.5)",
    "central_crop_batch": "tf.image.central_crop(x4, 0.5)",
    "central_crop_odd": "tf.image.central_crop(imgf, 0.7)",
    "central_crop_ratio": "tf.concat([x4, tf.image.central_crop(x4, x4.shape[1] / x4.shape[1])], axis=-1)",
    "concat_packed": "tf.concat([[2, 3], tf.shape(f), [7]], axis=0)",
    "stack_packed": "tf.stack([f[0], [1.0, 2.0, 3.0, 4.0], g[1]], axis=1)",
    "stack_scalars": "tf.stack([tf.reduce_sum(f), 0.5])",
    # (in a graph, where schedules run, it is the value: eager TF 2 returns a function of it)
    "piecewise_constant": "tf.function(lambda: tf.compat.v1.train.piecewise_constant(tf.reduce_sum(pos), [2.0, 80.0], "
                          "[0.1, 0.01, 0.001]))()",
    "piecewise_constant_last": "tf.function(lambda: tf.compat.v1.train.piecewise_constant(tf.reduce_sum(pos), [2.0, 8.0], "
                               "[0.1, 0.01, 0.001]))()",
}

# Differences the rules' notes state: case → (TF dtype, MindSpore dtype).
DTYPE_DIFFERENCES = {
    "reduce_sum_int": ("int32", "int64"),
    "argmin": ("int64", "int32"),
    "shape": ("int32", "int64"),
    "shape_item": ("int32", "int64"),
    "shape_times": ("int32", "int64"),
    "range_end": ("int32", "int64"),
    "range_start_end_step": ("int32", "int64"),
    "range_delta_kw": ("int32", "int64"),
    "divide_int": ("float64", "float32"),
    "concat_packed": ("int32", "int64"),  # (tf.shape's: see "shape")
    "meshgrid_xy": ("int32", "int64"),  # (tf.range's: see "range_end")
}

TF_SCRIPT = """
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

arrays = dict(np.load(sys.argv[1]))
cases = json.loads(open(sys.argv[2]).read())
env = {"tf": tf, "np": np, **{k: tf.constant(v) for k, v in arrays.items()}}
out = {}
for name, expr in cases.items():
    value = eval(expr, env)
    out[name] = np.asarray(value.numpy())
np.savez(sys.argv[3], **out)
"""


@pytest.fixture(scope="module")
def tf_results(tmp_path_factory) -> dict[str, np.ndarray]:
    work = tmp_path_factory.mktemp("tf_math")
    np.savez(work / "inputs.npz", **INPUTS)
    (work / "cases.json").write_text(json.dumps(CASES))
    (work / "run.py").write_text(TF_SCRIPT)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, str(work / "run.py"), str(work / "inputs.npz"), str(work / "cases.json"), str(work / "out.npz")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(np.load(work / "out.npz"))


def converted(expr: str) -> str:
    code, _ = convert(f"import numpy as np\nimport tensorflow as tf\n\nresult = {expr}\n")
    assert "tf." not in code and "import tensorflow" not in code, f"not everything was converted:\n{code}"
    return code


MS_SCRIPT = """
import json, sys
import numpy as np
import mindspore as ms

arrays = dict(np.load(sys.argv[1]))
codes = json.loads(open(sys.argv[2]).read())
out = {}
for name, code in codes.items():
    env = {k: ms.Tensor(v) for k, v in arrays.items()}
    exec(compile(code, name, "exec"), env)
    value = env["result"]
    out[name] = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
np.savez(sys.argv[3], **out)
"""


@pytest.fixture(scope="module")
def ms_results(tmp_path_factory) -> dict[str, np.ndarray]:
    """The converted expressions evaluated by MindSpore, in a process of their own (MindSpore
    kernels are kept out of the long-lived test process, as TF is)."""
    work = tmp_path_factory.mktemp("ms_math")
    np.savez(work / "inputs.npz", **INPUTS)
    (work / "codes.json").write_text(json.dumps({name: converted(expr) for name, expr in CASES.items()}))
    (work / "run.py").write_text(MS_SCRIPT)
    done = subprocess.run([sys.executable, str(work / "run.py"), str(work / "inputs.npz"), str(work / "codes.json"), str(work / "out.npz")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(np.load(work / "out.npz"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_mindspore_matches_tensorflow(name, tf_results, ms_results):
    want = tf_results[name]
    got = ms_results[name]
    assert got.shape == want.shape, f"{name}: shape {got.shape} != TF {want.shape}"
    dtypes = (str(want.dtype), str(got.dtype))
    if name in DTYPE_DIFFERENCES:
        assert dtypes == DTYPE_DIFFERENCES[name]
    else:
        assert dtypes[0] == dtypes[1], f"{name}: dtype {dtypes[1]} != TF {dtypes[0]}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)  # float32 rounding
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


# -- calls that must stay as they are (and be reported) --------------------------------------

LEFT_AS_THEY_ARE = {
    "tf.matmul(a, b, transpose_a=True)": "TFM207",
    "tf.matmul(a, b, transpose_b=flag)": "TFM207",
    "tf.matmul(a, b, adjoint_a=True)": "TFM207",
    "tf.cast(x, 'float8_e4m3')": "TFM202",
    "tf.cast(x, kind)": None,  # a variable: converted, it must hold a MindSpore dtype
    "tf.argmax(x, 1, tf.int32)": "TFM208",  # output_type given by position
    "tf.cumsum(x, exclusive=True)": "TFM263",
    "tf.math.cumsum(x, reverse=flag)": "TFM263",
    "tf.convert_to_tensor(x, dtype_hint=tf.float32)": "TFM214",
    "tf.transpose(x, conjugate=True)": "TFM213",
    "tf.nn.bias_add(x, b, data_format='NCHW')": "TFM275",
    "tf.linspace(start, stop, 5)": "TFM279",
    "tf.compat.v1.image.resize(x, size, preserve_aspect_ratio=True)": "TFM280",
    "tf.reduce_sum(*parts)": "TFM201",
    "tf.where(mask, x)": "TFM216",
    "tf.nn.silu(x, beta=2.0)": "TFM220",
    "tf.shape(x, out_type=tf.int64)": "TFM204",
}


def test_as_dtype_gives_mindspore_dtypes():
    from migrate.runtime import tfmath

    code = converted("tf.as_dtype('float32')")
    assert "tfmath.as_dtype('float32')" in code
    assert tfmath.as_dtype("float32") is ms.float32 and tfmath.as_dtype("double") is ms.float64
    assert tfmath.as_dtype(np.int64) is ms.int64 and tfmath.as_dtype(np.dtype("bool")) is ms.bool_
    assert tfmath.as_dtype(ms.float16) is ms.float16
    with pytest.raises(TypeError, match="Cannot convert the argument `type_value`: 'float7'"):
        tfmath.as_dtype("float7")


@pytest.mark.parametrize("expr", sorted(LEFT_AS_THEY_ARE))
def test_calls_that_do_not_fit_stay_and_are_reported(expr):
    rule = LEFT_AS_THEY_ARE[expr]
    code, findings = convert(f"import tensorflow as tf\n\nresult = {expr}\n")
    if rule is None:
        assert "ops.cast(x, kind)" in code
        return
    assert f"result = {expr.split('(')[0]}(" in code  # the call stays (its arguments may be converted)
    assert f"# migrate: {rule} not converted" in code
    assert any(f.rule == rule and f.status == "manual" for f in findings)


def test_argument_layout_and_comments_survive():
    source = textwrap.dedent("""\
        import tensorflow as tf

        loss = tf.reduce_sum(  # per-example losses
            per_example,
            axis=0,
        )
    """)
    code, _ = convert(source)
    assert code == textwrap.dedent("""\
        from mindspore import ops

        loss = ops.sum(  # per-example losses
            per_example,
            dim=0,
        )
    """)


def test_a_complex_argument_keeps_its_meaning():
    code, _ = convert("import tensorflow as tf\n\nx = tf.nn.softmax_cross_entropy_with_logits(labels=a + b, logits=c if d else e)\n")
    assert "ops.neg(a + b) * ops.log_softmax(c if d else e, axis=-1)" in code


# -- the rules' own data ----------------------------------------------------------------------

MATH_RULES = [r for r in load_rules() if r.area == "math"]


@pytest.mark.parametrize("rule", [r for r in MATH_RULES if r.operation == "map_call"], ids=lambda r: r.id)
def test_every_matched_name_has_a_template(rule):
    assert {name.rsplit(".", 1)[-1] for name in rule.match} <= set(rule.params["templates"])


def test_every_matched_tf_name_exists_in_tensorflow():
    """In TF 2, or in `tf.compat.v1` (a TF 1 program's `tf.to_float` is `tf.compat.v1.to_float`)."""
    names = sorted({n for r in MATH_RULES for n in r.match})
    script = (
        "import sys, importlib, tensorflow\n"
        "missing = []\n"
        "for name in sys.argv[1:]:\n"
        "    obj = tensorflow\n"
        "    for part in name.split('.')[1:]:\n"
        "        obj = getattr(obj, part, None)\n"
        "    v1 = tensorflow.compat.v1\n"  # TF 1 code's top-level names (`tf.to_float`) are tf.compat.v1's
        "    for part in name.split('.')[1:]:\n"
        "        v1 = getattr(v1, part, None)\n"
        "    if obj is None and v1 is None: missing.append(name)\n"
        "print(' '.join(missing))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == []


def test_every_case_is_checked_by_some_rule():
    rules = {r.id for r in MATH_RULES}
    seen = set()
    for expr in CASES.values():
        _, findings = convert(f"import tensorflow as tf\n\nresult = {expr}\n")
        seen |= {f.rule for f in findings}
    assert rules <= seen, f"rules without a numeric case: {sorted(rules - seen)}"

