"""migrate's Keras against TensorFlow's Keras 3 on the same inputs: same numbers.

Single-process cases (programs/single_cases.py) run once with tf.keras and once with
migrate.runtime.keras; the two-replica cases (programs/distributed_cases.py) run on TF's
MirroredStrategy over 2 logical CPUs and on 2 processes under the launcher. All four
sides start at once (module fixture) and are awaited by the tests that need them.

Tolerances: rtol 1e-5 for single operations, 1e-4 for training trajectories, each with
an absolute floor of 1e-5 (1e-4) times the magnitude of the compared values.
"""

import pytest

from keras_helpers import compare_area, launched, load, single_side, tf_replicas

pytest.importorskip("mindspore")
pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.launcher]


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keras")
    shared = tmp / "shared"
    shared.mkdir()
    jobs = {
        "tf_single": single_side("tf", tmp / "tf_single.json"),
        "mk_single": single_side("mk", tmp / "mk_single.json"),
        "tf_dist": tf_replicas("distributed_cases.py", "tf", str(tmp / "dist")),
        "mk_dist": launched("distributed_cases.py", "mk", str(tmp / "dist"), log_dir=tmp / "logs",
                            env={"KERAS_TEST_SHARED_DIR": str(shared)}),
    }
    yield tmp, jobs, shared
    for job in jobs.values():
        if job.process.poll() is None:
            job.process.kill()


@pytest.fixture(scope="module")
def single(sides):
    tmp, jobs, _ = sides
    jobs["tf_single"].wait()
    jobs["mk_single"].wait()
    return load(tmp / "mk_single.json"), load(tmp / "tf_single.json")


@pytest.fixture(scope="module")
def distributed(sides):
    tmp, jobs, shared = sides
    output = jobs["mk_dist"].wait()
    assert "distributed cases done on rank 0" in output
    jobs["tf_dist"].wait()
    return [load(tmp / "dist" / f"mk-{rank}.json") for rank in (0, 1)], load(tmp / "dist" / "tf-0.json"), shared


def _check(ours, theirs, rtol, atol_scale=1e-5, keys=None):
    problems = compare_area(ours, theirs, rtol=rtol, atol_scale=atol_scale, keys=keys)
    assert not problems, "\n".join(problems)


RECURRENT = ("simplernn_", "lstm_", "gru_")


def test_layer_forward_passes_and_keras_weight_layouts(single):
    ours, theirs = single
    _check(ours["layers"], theirs["layers"], rtol=1e-5, keys=[k for k in theirs["layers"] if not k.startswith(RECURRENT)])
    # A recurrence carries float32 roundings (of matrix products summed in another order) through
    # every step: 1e-4 over nine steps.
    _check(ours["layers"], theirs["layers"], rtol=1e-4, keys=[k for k in theirs["layers"] if k.startswith(RECURRENT)])
    assert ours["layers"]["recurrent_weight_shapes"] == theirs["layers"]["recurrent_weight_shapes"]
    assert ours["layers"]["model_weight_shapes"] == theirs["layers"]["model_weight_shapes"]
    assert ours["layers"]["model_roundtrip_error"] == 0.0


def test_constant_initializers_give_exactly_the_numbers(single):
    ours, theirs = single
    for key in ("constant", "constant_initializer_flat"):
        assert ours["initializers"][key] == theirs["initializers"][key], key


def test_random_initializers_follow_keras_distributions(single):
    ours, theirs = single
    for key, stats in theirs["initializers"].items():
        if not key.startswith("stats_"):
            continue
        mean, std, largest = stats
        our_mean, our_std, our_largest = ours["initializers"][key]
        assert abs(our_mean - mean) < 0.01 + 0.02 * abs(mean), key
        assert abs(our_std - std) <= 0.03 * std + 1e-9, key
        if key not in ("stats_random_normal",):  # bounded distributions share the bound
            assert abs(our_largest - largest) <= 0.02 * largest + 1e-9, key


def test_losses_every_reduction_and_from_logits(single):
    ours, theirs = single
    _check(ours["losses"], theirs["losses"], rtol=1e-5)


def test_optimizers_and_schedules_over_several_steps(single):
    ours, theirs = single
    _check(ours["optimizers"], theirs["optimizers"], rtol=1e-5)
    for name, result in theirs["optimizers"].items():
        if isinstance(result, dict):
            assert ours["optimizers"][name]["iterations"] == result["iterations"], name


def test_loss_scale_optimizer_skips_overflowed_steps_and_moves_the_scale_as_keras(single):
    """Overflows forced at steps 3, 7, 8, 9 (inf, nan, -inf): same skipped steps, scales, counters, weights."""
    ours, theirs = single
    assert "__error__" not in ours["loss_scale"], ours["loss_scale"].get("__error__")
    for name in ("sgd_momentum", "adam_clipnorm"):
        mine, keras = ours["loss_scale"][name], theirs["loss_scale"][name]
        schedule = [(s["scale_before"], s["scale"], s["counter"], s["iterations"]) for s in keras]
        assert [(s["scale_before"], s["scale"], s["counter"], s["iterations"]) for s in mine] == schedule, name
        # The schedule is the one Keras documents: halve and skip on overflow, double after 3 finite steps.
        assert [s[1] for s in schedule] == [2.0 ** 15] * 2 + [2.0 ** 16, 2.0 ** 15] + [2.0 ** 15] * 2 + [
            2.0 ** 16, 2.0 ** 15, 2.0 ** 14, 2.0 ** 13, 2.0 ** 13, 2.0 ** 13], name
        _check({f"{name}@{i}": s["variables"] for i, s in enumerate(mine)},
               {f"{name}@{i}": s["variables"] for i, s in enumerate(keras)}, rtol=1e-5)
    assert ours["loss_scale"]["defaults"] == theirs["loss_scale"]["defaults"] == [3.0 * 2 ** 15, 2000]


def test_mixed_float16_computes_in_half_precision_and_scales_losses_as_keras(single):
    """Policy dtypes as Keras's; fit (automatically loss-scaled) to rtol 1e-3, as float16 rounds in a different
    summation order; a custom loop whose float16 gradients overflow skips the same 7 steps with TF's scales."""
    ours, theirs = single
    mine, keras = ours["mixed_precision"], theirs["mixed_precision"]
    assert "__error__" not in mine, mine.get("__error__")
    assert mine["policy"] == keras["policy"] == ["mixed_float16", "float16", "float32", "mixed_float16"]
    assert mine["dtypes"] == keras["dtypes"] == ["float16", "float32", "float32"]
    assert mine["wrapped"] == keras["wrapped"] == "LossScaleOptimizer"
    _check({"predict": mine["predict"]}, {"predict": keras["predict"]}, rtol=1e-3, atol_scale=1e-3)
    _check(mine["fit"], keras["fit"], rtol=1e-3, atol_scale=1e-3)
    steps, tf_steps = mine["overflow_loop"]["steps"], keras["overflow_loop"]["steps"]
    assert [(s["scale"], s["iterations"]) for s in steps] == [(s["scale"], s["iterations"]) for s in tf_steps]
    assert [s["iterations"] for s in tf_steps[:7]] == [0] * 7  # the forced overflows really happened
    _check({"loss": [s["loss"] for s in steps]}, {"loss": [s["loss"] for s in tf_steps]}, rtol=1e-4)
    _check(mine["overflow_loop"], keras["overflow_loop"], rtol=1e-3, keys=["weights"])


def test_two_process_loss_scaling_equals_mirrored_strategy(distributed):
    """Different gradients per replica, overflowing on both at steps 2 and 5: TF's scales, skips and weights."""
    ranks, theirs, _ = distributed
    for rank in ranks:
        assert [(s["scale"], s["iterations"]) for s in rank["loss_scale"]] == [
            (s["scale"], s["iterations"]) for s in theirs["loss_scale"]]
        _check({"loss_scale": [s["variables"] for s in rank["loss_scale"]]},
               {"loss_scale": [s["variables"] for s in theirs["loss_scale"]]}, rtol=1e-5)


def test_two_process_fit_callbacks_equal_mirrored_strategy(distributed):
    """A fit interrupted and resumed by BackupAndRestore, with ReduceLROnPlateau and one CSV log for the job."""
    ranks, theirs, _ = distributed
    keras = theirs["fit_callbacks"]
    assert keras["epochs"] == [2, 3] and keras["backup_deleted"]
    for rank in ranks:
        mine = rank["fit_callbacks"]
        for key in ("epochs", "csv_header", "backup_deleted"):
            assert mine[key] == keras[key], key
        assert len(mine["csv"]) == len(keras["csv"]) == 2  # rank 0 wrote it once
        _check(mine, keras, rtol=1e-4, atol_scale=1e-4, keys=["history", "weights", "csv"])


def test_an_overflow_on_one_replica_skips_the_step_on_every_replica(distributed):
    ranks, _, _ = distributed
    first, second = (rank["loss_scale_one_replica_overflows"] for rank in ranks)
    assert first == second  # same scales, iterations and weights on both processes
    # Step 1: only rank 1 overflows, and both skip; step 2 overflows on both (as in the case above).
    assert [(s["scale"], s["iterations"]) for s in first[:4]] == [(2.0 ** 15, 1), (2.0 ** 14, 1), (2.0 ** 13, 1),
                                                                   (2.0 ** 13, 2)]


def test_callbacks_reduce_lr_csv_logger_class_weight_and_backup_and_restore(single):
    ours, theirs = single
    mine, keras = ours["callbacks"], theirs["callbacks"]
    assert "__error__" not in mine, mine.get("__error__")
    plateau, tf_plateau = mine["plateau_csv_class_weight"], keras["plateau_csv_class_weight"]
    assert plateau["csv_header"] == tf_plateau["csv_header"]
    assert sorted(plateau["history"]) == sorted(tf_plateau["history"])
    _check(plateau, tf_plateau, rtol=1e-4, atol_scale=1e-4, keys=["history", "weights", "csv"])
    # The rate halved after a plateau, waited out its cooldown, and stopped at min_lr, as Keras's did.
    assert len(set(tf_plateau["history"]["learning_rate"])) == 4
    backup, tf_backup = mine["backup_and_restore"], keras["backup_and_restore"]
    for key in ("saved", "metadata", "epochs", "deleted"):
        assert backup[key] == tf_backup[key], key
    assert tf_backup["epochs"] == [2, 3] and tf_backup["deleted"]
    _check(backup, tf_backup, rtol=1e-4, atol_scale=1e-4, keys=["history", "weights"])
    assert backup["max_difference_to_uninterrupted"] == tf_backup["max_difference_to_uninterrupted"] == 0.0


def test_saved_models_load_compiled_and_train_on_as_keras(single):
    ours, theirs = single
    mine, keras = ours["saving"], theirs["saving"]
    assert "__error__" not in mine, mine.get("__error__")
    sequential, tf_sequential = mine["sequential_adam"], keras["sequential_adam"]
    for key in ("max_difference_after_load", "optimizer", "iterations", "max_difference_to_unsaved"):
        assert sequential[key] == tf_sequential[key], key
    # The loaded model went on from Adam's saved moments: its next epochs are the unsaved model's.
    assert sequential["max_difference_to_unsaved"] == 0.0 and sequential["iterations"] == 12
    _check(sequential, tf_sequential, rtol=1e-4, atol_scale=1e-4, keys=["history", "weights"])
    graph, tf_graph = mine["functional_graph"], keras["functional_graph"]
    for key in ("layer_classes", "weight_shapes", "clone_shapes", "json_shapes"):
        assert graph[key] == tf_graph[key], key
    assert graph["clone_with_weights_max_difference"] == 0.0
    _check(graph, tf_graph, rtol=1e-5, keys=["predict"])
    assert mine["subclassed"]["class"] == keras["subclassed"]["class"] == "TwoLayers"
    assert mine["subclassed"]["hidden"] == 7
    _check(mine["subclassed"], keras["subclassed"], rtol=1e-5, keys=["predict"])


def test_metrics_update_result_reset(single):
    ours, theirs = single
    _check(ours["metrics"], theirs["metrics"], rtol=1e-6)


def test_fit_history_weights_evaluate_predict_one_process(single):
    ours, theirs = single
    _check(ours["fit"], theirs["fit"], rtol=1e-4, atol_scale=1e-4)
    for case in theirs["fit"]:
        assert sorted(ours["fit"][case]["history"]) == sorted(theirs["fit"][case]["history"]), case


def test_two_process_fit_equals_mirrored_strategy(distributed):
    ranks, theirs, _ = distributed
    assert theirs["replicas"] == 2
    for rank in ranks:
        assert rank["replicas"] == 2
        _check(rank, theirs, rtol=1e-4, atol_scale=1e-4, keys=["fit_sgd", "fit_adam_last_batch_of_one"])
        for case in ("fit_sgd", "fit_adam_last_batch_of_one"):
            assert sorted(rank[case]["history"]) == sorted(theirs[case]["history"]), case


def test_two_process_custom_loop_and_metrics_equal_mirrored_strategy(distributed):
    ranks, theirs, _ = distributed
    for rank in ranks:
        _check(rank, theirs, rtol=1e-4, atol_scale=1e-4, keys=["custom_loop"])
        assert rank["custom_loop"]["iterations"] == theirs["custom_loop"]["iterations"]


def test_a_programs_own_metric_combines_its_weights_by_their_aggregation_as_mirrored_strategy(distributed):
    """SUM and MEAN weights read as the replicas' sum and mean, ONLY_FIRST_REPLICA as the first's (TFD300)."""
    ranks, theirs, _ = distributed
    for rank in ranks:
        _check(rank, theirs, rtol=1e-5, keys=["custom_metric"])
    first_batch = theirs["custom_metric"][0]
    assert first_batch[1] == 8.0 and first_batch[3] == 4.0  # count of both replicas; the first replica's


def test_two_process_checkpoints_written_once_and_restorable(distributed):
    ranks, _, shared = distributed
    for rank in ranks:
        checks = rank["checkpoints"]
        assert checks["load_weights_max_error"] == 0.0
        assert checks["saved"] == ["ckpt-1", "ckpt-2", "ckpt-3"]
        assert checks["manager_checkpoints"] == ["ckpt-2", "ckpt-3"]
        assert checks["latest"] == "ckpt-3"
        assert checks["files"] == ["checkpoint", "ckpt-2.ckpt", "ckpt-3.ckpt"]
        assert checks["restored_step_max_error"] == 0.0
        assert checks["restored_iterations"][0] == checks["restored_iterations"][1]
    leftovers = [p.name for p in shared.rglob(".tmp-*")]
    assert not leftovers
