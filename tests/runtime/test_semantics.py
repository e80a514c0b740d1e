"""tf.distribute semantics under the real launcher (2 CPU processes) against TensorFlow's numbers.

One launch runs programs/battery.py on both ranks; TensorFlow computes the same keys on a
2-replica MirroredStrategy in its own process (programs/tf_reference.py).
"""

import json

import numpy as np
import pytest

from runtime_helpers import PROGRAMS, start_launch, start_python

pytestmark = pytest.mark.launcher

REPLICA_KEYS = ["split_14_8", "split_5_4", "split_1_4", "split_9_7", "split_dict", "split_tuple", "fromfn_11_2",
                "fromfn_9_2"]
GLOBAL_KEYS = ["sum_none", "mean_none", "strings", "int_mean", "gather0", "gather1", "all_reduce_nested",
               "fromfn_ctx"] + [f"{kind}_axis0_{n}_{b}" for kind in ("sum", "mean")
                                for n, b in [(14, 8), (5, 4), (1, 4), (9, 7)]]


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """The shim's battery (2 processes) and TensorFlow's reference run at the same time."""
    pytest.importorskip("mindspore")
    tmp = tmp_path_factory.mktemp("battery")
    import importlib.util

    with_tf = importlib.util.find_spec("tensorflow") is not None
    battery = start_launch("battery.py", str(tmp / "out"), *(["with-tf"] if with_tf else []), tmp_path=tmp,
                           options=["--timeout", "150"], name="battery")
    reference = (start_python(str(PROGRAMS / "tf_reference.py"), str(tmp / "tf.json"), log_dir=tmp / "tf",
                              env={"TF_CPP_MIN_LOG_LEVEL": "2"}) if with_tf else None)
    return tmp, battery, reference


@pytest.fixture(scope="module")
def ranks(started):
    tmp, battery, _ = started
    job = battery.wait(200)
    assert job.returncode == 0, job.stdout + job.stderr
    assert "battery done on rank 0" in job.stdout
    assert "battery done on rank 1" not in job.stdout  # only rank 0 streams by default
    return [json.loads((tmp / "out" / f"{r}.json").read_text()) for r in (0, 1)]


@pytest.fixture(scope="module")
def tf_results(started):
    tmp, _, reference = started
    if reference is None:
        pytest.skip("TensorFlow not installed")
    completed = reference.wait(300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads((tmp / "tf.json").read_text())


def assert_same(ours, theirs, key):
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), key
        for name in theirs:
            assert_same(ours[name], theirs[name], f"{key}.{name}")
    elif isinstance(theirs, (list, tuple)) and any(isinstance(t, (list, dict, str)) for t in theirs):
        assert len(ours) == len(theirs), (key, ours, theirs)
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{key}[{index}]")
    elif isinstance(theirs, str):
        assert ours == theirs, key
    else:
        np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                                   rtol=1e-6, atol=1e-7, err_msg=key)


@pytest.mark.parametrize("key", GLOBAL_KEYS)
def test_every_rank_gets_tfs_result(ranks, tf_results, key):
    for rank in ranks:
        assert_same(rank[key], tf_results[key], key)


@pytest.mark.parametrize("key", REPLICA_KEYS)
def test_each_rank_gets_its_replicas_part(ranks, tf_results, key):
    for r, rank in enumerate(ranks):
        assert_same(rank[key], [step[r] for step in tf_results[key]], f"{key} rank {r}")


def test_values_from_function_give_each_rank_its_replicas_value(ranks, tf_results):
    for r, rank in enumerate(ranks):
        assert rank["values_fn"] == [tf_results["values_fn"][r]]


@pytest.mark.parametrize("where", ["ctx_outside", "ctx_scope", "ctx_run", "ctx_run_in_scope"])
def test_context_predicates_match_tf(ranks, tf_results, where):
    theirs = tf_results[where]
    for r, rank in enumerate(ranks):
        assert rank[where] == (theirs[r] if isinstance(theirs, list) else theirs), (where, r)


def test_merge_call_and_errors_match_tf(ranks, tf_results):
    for rank in ranks:
        assert rank["merge_call"] == tf_results["merge_call"][0]
        assert rank["unknown_op_err"] == tf_results["unknown_op_err"]
        assert rank["bs_err"] == tf_results["bs_err"]
        assert rank["reduce_in_run_err"].startswith(tf_results["reduce_in_run_err"])


def test_training_loop_matches_tf_losses(ranks, tf_results):
    for rank in ranks:
        np.testing.assert_allclose(rank["losses"], tf_results["losses"], rtol=2e-6)


def test_mindspore_values_and_ops_reduce_op(ranks):
    for rank in ranks:
        np.testing.assert_allclose(rank["ms_reduce_op_sum"], [[3.0, 6.0], [0.5, 6.0]])
        assert rank["ms_tensor_kind"] == "Tensor"
        assert rank["float64_kind"] == "float64"
        assert rank["float64_sum"][0] == 0.1 + 1.1  # exact: float64 does not pass through 32 bits
        assert rank["float64_sum"][1] == 2e-12


def test_tf_tensor_values_come_back_as_tf_tensors(ranks):
    if "tf_value" not in ranks[0]:
        pytest.skip("TensorFlow not installed")
    for rank in ranks:
        assert rank["tf_value"] == ["tensorflow", [3.0, 6.0]]


def test_bad_use_gets_clear_errors_and_ranks_stay_in_step(ranks):
    for r, rank in enumerate(ranks):
        message = rank["shape_mismatch_err"]
        assert message.startswith("RankMismatchError: ranks disagree on reduce")
        assert "rank 0: reduce(SUM, axis=None) on * with float32[3]" in message
        assert "rank 1: reduce(SUM, axis=None) on * with float32[4]" in message
        assert rank["after_mismatch"] == 2.0
        assert rank["unsupported_err"].startswith("TypeError: migrate.runtime cannot reduce or exchange a value of type")
        assert rank["after_unsupported"] == 4.0
        assert "RankMismatchError: ranks disagree on" in rank["uneven_steps_err"]
        assert "end of distributed dataset after 2 steps" in rank["uneven_steps_err"]
        assert rank["after_uneven"] == 6.0


def test_repeated_calls_skip_the_agreement_round_but_still_catch_a_deviating_rank(ranks):
    for r, rank in enumerate(ranks):
        assert rank["rounds_in_loop"] <= 3          # 10 identical reduces: agreed twice, then predicted
        assert rank["grad_rounds_in_loop"] <= 3
        assert rank["grad_steady"] == [[[2.0] * 3] * 2, [2.0] * 4]
        assert rank["predicted_change_all"] == [2.0] * 5   # all ranks changing together is fine
        message = rank["predicted_mismatch_err"]
        assert message.startswith("RankMismatchError: ranks disagree on reduce"), message
        assert "rank 0: reduce(SUM, axis=None) on * with float32[3]" in message
        assert "rank 1: reduce(SUM, axis=None) on * with float32[4]" in message
        assert rank["after_predicted_mismatch"] == 8.0
        message = rank["grad_mismatch_err"]
        assert message.startswith("RankMismatchError: ranks disagree on aggregate_gradients"), message
        assert "rank 0: aggregate_gradients(SUM, bucket_bytes=auto) float32[2, 3] float32[4]" in message
        assert "rank 1: aggregate_gradients(SUM, bucket_bytes=auto) float32[2, 4] float32[4]" in message
        assert rank["after_grad_mismatch"] == 10.0
        assert rank["predicted_then_gather"] == [[0.0, 0.0], [1.0, 1.0]]  # every rank switching is fine
        message = rank["predicted_vs_gather_err"]
        assert message.startswith("RankMismatchError: ranks disagree on"), message
        assert "rank 0: reduce(SUM, axis=None) on * with float32[2]" in message
        assert "rank 1: gather(axis=0) on * float32[*,2]" in message
        assert rank["after_predicted_vs_gather"] == 12.0


def test_gradients_are_summed_or_averaged_in_buckets(ranks):
    expected_sum = [3.0 * (i + 1) for i in range(60)] + [None, 3.0]
    expected_mean = [1.5 * (i + 1) for i in range(60)] + [None, 1.5]
    for rank in ranks:
        assert rank["grad_sum"] == expected_sum
        assert rank["grad_mean"] == expected_mean
        assert rank["grad_shapes_ok"] is True


def test_parameters_start_identical(ranks):
    assert ranks[0]["before_broadcast"] != ranks[1]["before_broadcast"]  # different seeds per rank
    assert ranks[0]["after_broadcast"] == ranks[1]["after_broadcast"] == ranks[0]["before_broadcast"]
    assert ranks[0]["scope_weights"] == ranks[1]["scope_weights"]  # broadcast when the scope closed
