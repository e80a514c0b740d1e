"""The yardstick: converted programs train to the same numbers as their TF originals.

Programs convert in the native tier (the default: MindSpore's own cells, optimizers and
``ms.jit`` where proven equal) and, where that gives other code, in the shim tier too
(``--tier shim``); each default conversion runs three ways: the TF original on 2 replicas (2 logical CPU
devices, or 2 TF workers for MultiWorkerMirroredStrategy), ``migrate convert`` then
``migrate run -n 2``, and the converted program started plainly (``python train.py``,
one process) against TF on 1 replica; a shim-tier conversion runs on 2 processes (the
shim's one-process path is that of every program the native tier leaves to the shim). Numbers must agree to rtol 1e-4; a program that
computes in float16 (mixed precision) to 1e-3, float16's own rounding summed in a
different order, with its loss scales and skipped steps still exact (a power of two apart
otherwise).
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.equivalence.harness import (
    PROGRAMS,
    assert_same_numbers,
    convert,
    programs,
    run_converted,
    run_plain,
    run_tf,
    run_tf_workers,
)

pytest.importorskip("tensorflow")
pytest.importorskip("mindspore")

MULTI_WORKER = {"multi_worker"}
TOLERANCES = {"mixed_precision": {"rtol": 1e-3, "atol": 1e-3}}
SOURCES = programs()
PROGRAM_NAMES = sorted(SOURCES)


# Programs that read files TF wrote: their arguments, made by a script run with TF.
MAKE_RECORDS = Path(__file__).with_name("make_records.py")
READS_RECORDS = {"custom_loop_tfrecords"}


@pytest.fixture(scope="module")
def program_args(tmp_path_factory) -> dict[str, tuple[str, ...]]:
    """Each program's command-line arguments (TFRecord files written by real TF, for those that read them)."""
    records = tmp_path_factory.mktemp("records")
    subprocess.run([sys.executable, str(MAKE_RECORDS), str(records)], check=True, capture_output=True, timeout=180)
    return {name: (str(records),) if name in READS_RECORDS else () for name in PROGRAM_NAMES}


def _tf_run(name: str, replicas: int, args: tuple[str, ...]) -> dict:
    original = SOURCES[name]
    return run_tf_workers(original, replicas, args) if name in MULTI_WORKER else run_tf(original, replicas, args)


# The program that writes TensorBoard summaries (given a directory after its records): its
# two-replica run is test_tensorboard_summaries_are_tfs_and_written_once, which compares the
# numbers as test_two_replicas_match_tensorflow does and then the event files.
SUMMARIES = "custom_loop_tfrecords"

# What each test of this module compares with: (program, TF replicas, with summaries), by test.
_TF_NEEDS = {
    "test_shim_tier_matches_tensorflow": lambda name: (name, 2, name == SUMMARIES),
    "test_two_replicas_match_tensorflow": lambda name: (name, 2, False),
    "test_plain_python_matches_one_replica": lambda name: (name, 1, False),
    "test_one_process_under_the_launcher_matches_one_replica": lambda name: ("example", 1, False),
    "test_tensorboard_summaries_are_tfs_and_written_once": lambda name: (SUMMARIES, 2, True),
}
# What each test runs of the converted program: (the native or shim tier, plain python, or the
# native tier writing summaries; program; processes), by test.
_RUN_NEEDS = {
    "test_shim_tier_matches_tensorflow": lambda name: ("shim", name, 2),
    "test_two_replicas_match_tensorflow": lambda name: ("native", name, 2),
    "test_plain_python_matches_one_replica": lambda name: ("plain", name, 1),
    "test_one_process_under_the_launcher_matches_one_replica": lambda name: ("native", "example", 1),
    "test_tensorboard_summaries_are_tfs_and_written_once": lambda name: ("summaries", SUMMARIES, 2),
}


def _needs(request, table: dict) -> list[tuple]:
    """What the selected tests of this module need from ``table``, in the order they run."""
    needs = []
    for item in request.session.items:
        if item.module is not request.module or item.originalname not in table:
            continue
        need = table[item.originalname](item.callspec.params.get("name") if hasattr(item, "callspec") else None)
        if need not in needs:
            needs.append(need)
    return needs


class Ahead:
    """Runs computed once for the module, ahead of the tests that read them, ``workers`` at a
    time in threads beside the tests, started in the order the selected tests need them: a
    TF run or a converted run under msrun waits on its cluster, its imports and its files
    much of the time, so runs side by side take about two thirds of the time they take one
    after the other on two cores. The numbers are the same whenever they are computed (each
    run is its own processes, port and directory); a run that fails fails the test that reads it."""

    def __init__(self, workers: int, name: str, run, needs: list[tuple]):
        self._run = run
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._futures: dict[tuple, Future] = {}
        for need in needs:
            self.submit(need)

    def submit(self, need: tuple) -> Future:
        if need not in self._futures:
            self._futures[need] = self._pool.submit(self._run, *need)
        return self._futures[need]

    def numbers(self, *need) -> dict:
        return self.submit(need).result(timeout=900)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def tf_references(request, program_args, tmp_path_factory):
    """TF's numbers for each (program, replicas, with summaries), one run at a time (a TF run uses
    both cores); the run with summaries writes them under ``.summaries``."""
    summaries = tmp_path_factory.mktemp("tf_summaries")

    def run(name: str, replicas: int, with_summaries: bool) -> dict:
        return _tf_run(name, replicas, (*program_args[name], str(summaries)) if with_summaries else program_args[name])

    references = Ahead(1, "tf-reference", run, _needs(request, _TF_NEEDS))
    references.summaries = summaries
    yield references
    references.close()


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("converted")
    return {name: convert(SOURCES[name], out / name) for name in PROGRAM_NAMES}


# The programs whose model the native tier lowers to MindSpore's own cells (checked below):
# they also run converted with `--tier shim`, which keeps migrate.runtime's Keras throughout.
NATIVE = {"custom_loop_tfrecords", "datasets_from_function", "example", "horovod_custom_loop", "horovod_native", "keras_fit", "keras_fit_callbacks", "keras_fit_softmax", "keras_quickstart", "metrics_replica_context", "multi_worker",
          "native_adam", "native_classifier", "native_cnn", "subclassed_model"}
# horovod_native's shim tier is horovod_custom_loop's path (the runtime's Horovod, `mk`): not run twice.
SHIM_TOO = NATIVE - {"horovod_native"}


@pytest.fixture(scope="module")
def shim_tier(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("shim")
    return {name: convert(SOURCES[name], out / name, "--tier", "shim") for name in sorted(SHIM_TOO)}


@pytest.fixture(scope="module")
def runs(request, converted, shim_tier, program_args, tf_references, tmp_path_factory):
    """The converted programs' numbers for each (way, program, processes), two runs at a time
    beside TF's; each run in its own working directory (the programs write checkpoints into
    theirs), and the run with summaries writes them under ``.summaries``."""
    base = tmp_path_factory.mktemp("runs")
    summaries = base / "summaries"

    def run(way: str, name: str, processes: int) -> dict:
        work = base / f"{way}-{name}-{processes}"
        work.mkdir()
        if way == "plain":
            return run_plain(converted[name], program_args[name], cwd=work)
        script = shim_tier[name] if way == "shim" else converted[name]
        args = (*program_args[name], str(summaries)) if way == "summaries" else program_args[name]
        return run_converted(script, processes, work / "logs", args, cwd=work)

    ahead = Ahead(2, "converted-run", run, _needs(request, _RUN_NEEDS))
    ahead.summaries = summaries
    yield ahead
    ahead.close()


def test_native_tier_lowers_what_it_should(tf_references, converted, shim_tier, runs):
    # (tf_references first: the TF runs start beside the conversions; then the converted runs)
    assert {name for name, path in converted.items() if "nn.SequentialCell(" in path.read_text(encoding="utf-8")} == NATIVE
    assert not any("nn.SequentialCell(" in path.read_text(encoding="utf-8") for path in shim_tier.values())


@pytest.mark.parametrize("name", sorted(SHIM_TOO))
def test_shim_tier_matches_tensorflow(name, runs, tf_references):
    """The same program converted with ``--tier shim``: TF's numbers on 2 processes. (The shim's
    one-process path is the plain run of every program the native tier leaves to the shim.)"""
    got = runs.numbers("shim", name, 2)
    # (the program that writes summaries shares the TF run that writes them: its numbers are the same)
    assert_same_numbers(got, tf_references.numbers(name, 2, name == SUMMARIES), **TOLERANCES.get(name, {}))


def test_every_program_has_a_golden_conversion(converted):
    """What users get, reviewed in git: ``fixtures/programs/<name>/expected.py``."""
    regen = os.environ.get("MIGRATE_REGEN") == "1"
    for name, script in converted.items():
        golden = PROGRAMS / name / "expected.py"
        got = script.read_text(encoding="utf-8")
        if regen:
            golden.write_text(got, encoding="utf-8")
            continue
        want = golden.read_text(encoding="utf-8")
        assert got == want, "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected", "got"))


@pytest.mark.parametrize("name", [name for name in PROGRAM_NAMES if name != SUMMARIES])
def test_two_replicas_match_tensorflow(name, runs, tf_references):
    got = runs.numbers("native", name, 2)
    assert_same_numbers(got, tf_references.numbers(name, 2, False), **TOLERANCES.get(name, {}))


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_plain_python_matches_one_replica(name, runs, tf_references):
    """``python train.py`` with no launcher: one process, one replica, TF's numbers on one device."""
    got = runs.numbers("plain", name, 1)
    assert_same_numbers(got, tf_references.numbers(name, 1, False), **TOLERANCES.get(name, {}))


def test_one_process_under_the_launcher_matches_one_replica(runs, tf_references):
    """``migrate run -n 1``: msrun with one worker joins a cluster of one."""
    got = runs.numbers("native", "example", 1)
    assert_same_numbers(got, tf_references.numbers("example", 1, False))


def _summaries(log_dir: Path) -> tuple[list[Path], dict[str, list[tuple[int, list[float]]]]]:
    """The event files under ``log_dir``, and per tag the (step, values) TensorBoard's reader gets."""
    import numpy as np
    from tensorboard.backend.event_processing import event_file_loader

    files = sorted(log_dir.glob("events.out.tfevents.*"))
    found: dict[str, list[tuple[int, list[float]]]] = {}
    for path in files:
        for event in event_file_loader.EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                dtype = {1: np.float32, 2: np.float64}[value.tensor.dtype]
                values = np.frombuffer(value.tensor.tensor_content, dtype).astype(float).tolist()
                found.setdefault(value.tag, []).append((event.step, values))
    return files, found


def test_tensorboard_summaries_are_tfs_and_written_once(runs, tf_references):
    """The two-replica run of the program that writes summaries: TF's numbers, and two processes
    write one event file, whose scalars are the losses the program printed and TF's, and whose
    histogram is TF's."""
    pytest.importorskip("tensorboard")
    name = SUMMARIES
    want = tf_references.numbers(name, 2, True)
    got = runs.numbers("summaries", name, 2)
    assert_same_numbers(got, want)
    tf_files, theirs = _summaries(tf_references.summaries)
    ms_files, ours = _summaries(runs.summaries)
    assert len(ms_files) == 1 == len(tf_files), ms_files
    assert sorted(ours) == sorted(theirs) == ["accuracy", "loss", "output_kernel"]
    assert [step for step, _ in ours["loss"]] == list(range(len(got["losses"])))
    printed = {"loss": got["losses"], "accuracy": got["accuracy"]}
    for tag in ("loss", "accuracy"):
        assert [v for _, (v,) in ours[tag]] == pytest.approx(printed[tag], rel=1e-6)
    for tag in ours:
        assert [s for s, _ in ours[tag]] == [s for s, _ in theirs[tag]]
        for (_, a), (_, b) in zip(ours[tag], theirs[tag]):
            assert a == pytest.approx(b, rel=1e-4, abs=1e-6), tag
