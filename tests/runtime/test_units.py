"""Fast single-process checks of the pieces that need no collective."""

import argparse
import json
import os

import numpy as np
import pytest

import migrate.runtime as tfd
from migrate.runtime import launch
from migrate.runtime.cluster import nodes_from_tf_config, split_address
from migrate.runtime.data import replica_slice
from migrate.runtime.fusion import plan_buckets


def test_importing_the_runtime_and_launcher_does_not_import_mindspore_or_tensorflow():
    code = ("import sys, migrate.runtime, migrate.runtime.launch; "
            "print('mindspore' in sys.modules, 'tensorflow' in sys.modules)")
    from runtime_helpers import run_python

    assert run_python("-c", code).stdout.split() == ["False", "False"]


def _bindable(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_a_default_scheduler_port_is_free_and_outside_the_ephemeral_range():
    """A port a bind to port 0 could also get (another job's worker) is not chosen: two jobs
    started at once once shared a scheduler that way. Nor is one already taken."""
    low, high = launch._ephemeral_ports()
    ports = [launch.free_port() for _ in range(50)]
    assert all(not low <= p <= high for p in ports)
    assert all(_bindable(p) for p in ports)
    taken = set(ports[:25])
    assert not taken & {launch.free_port(taken=taken) for _ in range(50)}


def test_a_default_scheduler_port_falls_back_to_the_kernels_choice(monkeypatch):
    every = set(launch._scheduler_ports())
    port = launch.free_port(taken=every)  # nothing left to pick from: the kernel picks
    assert port not in every and _bindable(port)
    monkeypatch.setattr(launch, "_ephemeral_ports", lambda: (1024, 65535))  # no port outside the range
    assert not launch._scheduler_ports() and _bindable(launch.free_port())


@pytest.mark.parametrize("n, replicas, expected", [
    (8, 2, [4, 4]), (6, 2, [3, 3]), (1, 2, [1, 0]), (7, 3, [3, 3, 1]), (4, 3, [2, 2, 0]), (5, 3, [2, 2, 1]),
    (2, 3, [1, 1, 0]), (0, 2, [0, 0]),
])
def test_replica_slice_matches_tf_split(n, replicas, expected):
    sizes = [len(range(n)[replica_slice(n, r, replicas)]) for r in range(replicas)]
    assert sizes == expected
    assert sum(sizes) == n


@pytest.mark.parametrize("op, expected", [("sum", tfd.ReduceOp.SUM), ("MEAN", tfd.ReduceOp.MEAN),
                                          ("Mean", tfd.ReduceOp.MEAN), (tfd.ReduceOp.SUM, tfd.ReduceOp.SUM)])
def test_reduce_op_names(op, expected):
    from migrate.runtime.reduce_op import resolve_reduce_op

    assert resolve_reduce_op(op) is expected


def test_unknown_reduce_op_message_is_tfs():
    with pytest.raises(ValueError, match="'MAX' is not a valid ReduceOp"):
        tfd.reduce("max", 1.0)


def test_single_replica_semantics_without_launcher():
    assert (tfd.rank(), tfd.group_size()) == (0, 1)
    np.testing.assert_allclose(tfd.reduce("MEAN", np.arange(6.0).reshape(3, 2), axis=0), [2.0, 3.0])
    assert tfd.reduce("sum", {"a": 2.0})["a"] == 2.0
    assert [b.tolist() for b in tfd.distribute_dataset([np.arange(3)])] == [[0, 1, 2]]
    grads = (np.ones(2), None)
    assert tfd.aggregate_gradients(grads) == grads


@pytest.mark.parametrize("env, launched", [
    ({}, False),
    ({"MS_ROLE": "MS_WORKER"}, False),  # a stray variable is not a launch
    ({"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "127.0.0.1", "MS_WORKER_NUM": "2"}, True),  # msrun
    ({"OMPI_COMM_WORLD_SIZE": "2"}, True),  # mpirun
    ({"RANK_TABLE_FILE": "/etc/hccl.json"}, True),  # Ascend rank table
    ({"MINDSPORE_HCCL_CONFIG_PATH": "/etc/hccl.json"}, True),
])
def test_init_joins_only_what_a_launcher_started(monkeypatch, env, launched):
    """spmd.init is MindSpore's init() under a launcher; started plainly it is one replica."""
    for name in ("MS_ROLE", "MS_SCHED_HOST", "MS_WORKER_NUM", "OMPI_COMM_WORLD_SIZE", "RANK_TABLE_FILE",
                 "MINDSPORE_HCCL_CONFIG_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert tfd.spmd.launched() is launched
    if not launched:
        tfd.spmd.init()  # MindSpore's own init() raises here; this is the identity
        assert (tfd.rank(), tfd.group_size()) == (0, 1)


def test_input_context_batch_size():
    context = tfd.InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=2)
    assert context.get_per_replica_batch_size(8) == 4
    with pytest.raises(ValueError, match="The `global_batch_size` 7 is not divisible by `num_replicas_in_sync` 2"):
        context.get_per_replica_batch_size(7)


def test_bucket_plan_respects_dtype_order_and_size():
    sizes = [100, 100, 100, 300, 50]
    dtypes = ["f32", "f32", "f16", "f32", "f32"]
    assert plan_buckets(sizes, dtypes, 250) == [[0, 1], [3], [4], [2]]
    assert plan_buckets(sizes, dtypes, None) == [[0, 1, 3, 4], [2]]


def test_tf_config_translation():
    config = {"cluster": {"worker": ["hostA:2222", "hostB:2222", "hostC:2222"]},
              "task": {"type": "worker", "index": 2}}
    plan = nodes_from_tf_config(config)
    assert (plan.nnodes, plan.node_rank, plan.master_addr, plan.master_port) == (3, 2, "hostA", 2222)
    chief = {"cluster": {"chief": ["c:1"], "worker": ["w0:2", "w1:3"]}, "task": {"type": "worker", "index": 0}}
    assert nodes_from_tf_config(chief).node_rank == 1
    assert nodes_from_tf_config(chief).master_addr == "c"
    with pytest.raises(ValueError, match="'ps' has no MindSpore counterpart"):
        nodes_from_tf_config({"cluster": {"worker": ["a:1"], "ps": ["b:2"]}, "task": {"type": "ps", "index": 0}})
    assert split_address("[::1]:80") == ("::1", 80)


def test_launcher_reads_tf_config(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    parser = argparse.ArgumentParser()
    launch.add_arguments(parser)
    args = parser.parse_args(["-n", "2", str(script)])
    environ = {"TF_CONFIG": json.dumps({"cluster": {"worker": ["10.0.0.1:23456", "10.0.0.2:23456"]},
                                         "task": {"type": "worker", "index": 1}})}
    plan = launch.make_plan(args, environ)
    assert (plan.nnodes, plan.node_rank, plan.master_addr, plan.master_port) == (2, 1, "10.0.0.1", 23456)
    assert plan.world_size == 4 and plan.global_rank(0) == 2
    command = launch.msrun_command(plan)
    assert "--worker_num=4" in command and "--local_worker_num=2" in command and "--node_rank=1" in command
    assert "--master_addr=10.0.0.1" in command and "--master_port=23456" in command


def test_launcher_rejects_bad_use(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    launch.add_arguments(parser)
    assert launch.run(parser.parse_args(["-n", "2", str(tmp_path / "missing.py")])) == launch.EXIT_LAUNCH_ERROR
    assert "no such program" in capsys.readouterr().err


def test_strategy_constructor_arguments_warn_once():
    with pytest.warns(UserWarning, match="argument 'devices' has no effect"):
        tfd.MirroredStrategy(devices=["/gpu:0", "/gpu:1"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tfd.MirroredStrategy(devices=["/gpu:0"])  # second time: silent


def test_public_surface():
    for name in ["MirroredStrategy", "OneDeviceStrategy", "MultiWorkerMirroredStrategy", "CollectiveAllReduceStrategy",
                 "CentralStorageStrategy", "ParameterServerStrategy", "TPUStrategy", "Strategy", "StrategyExtended",
                 "ReduceOp", "get_strategy", "has_strategy", "in_cross_replica_context", "get_replica_context",
                 "experimental_set_strategy", "ReplicaContext", "InputContext", "InputReplicationMode",
                 "InputOptions", "ValueContext", "PerReplica", "DistributedValues", "CrossDeviceOps",
                 "NcclAllReduce", "HierarchicalCopyAllReduce", "ReductionToOneDevice", "TFConfigClusterResolver"]:
        assert hasattr(tfd, name), name
    for name in ["MultiWorkerMirroredStrategy", "CentralStorageStrategy", "ParameterServerStrategy", "TPUStrategy",
                 "CommunicationOptions", "CommunicationImplementation", "CollectiveCommunication"]:
        assert hasattr(tfd.experimental, name), name
    for name in ["TFConfigClusterResolver", "TPUClusterResolver", "SimpleClusterResolver"]:
        assert hasattr(tfd.cluster_resolver, name), name
    strategy = tfd.MirroredStrategy()
    assert strategy.experimental_run_v2(lambda x: x + 1, args=(1,)) == 2
    assert strategy.extended.call_for_each_replica(lambda: 3) == 3
    assert strategy.experimental_local_results(5) == (5,)


def test_tf_config_cluster_resolver(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1", "b:2"]},
                                                "task": {"type": "worker", "index": 1}}))
    resolver = tfd.cluster_resolver.TFConfigClusterResolver()
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.cluster_spec().as_dict() == {"worker": ["a:1", "b:2"]}
    assert resolver.master() == "b:2"
    assert tfd.MultiWorkerMirroredStrategy().cluster_resolver.task_id == 1


def test_nodes_other_than_zero_start_their_workers_without_a_scheduler(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    parser = argparse.ArgumentParser()
    launch.add_arguments(parser)
    plan = launch.make_plan(parser.parse_args(["--nnodes", "2", "--node-rank", "1", "-n", "2", "--master-addr",
                                               "127.0.0.1", "--master-port", "29999", str(script)]), {})
    assert not launch.uses_msrun(plan) and plan.world_size == 4
    env = launch.direct_worker_environment(plan, 1, {"PATH": "/bin"})
    assert {k: env[k] for k in ("MS_ROLE", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_WORKER_NUM", "MS_NODE_ID", "RANK_ID",
                                "DEVICE_ID")} == {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "127.0.0.1",
                                                  "MS_SCHED_PORT": "29999", "MS_WORKER_NUM": "4", "MS_NODE_ID": "3",
                                                  "RANK_ID": "3", "DEVICE_ID": "1"}
    node0 = launch.make_plan(parser.parse_args(["--nnodes", "2", "--node-rank", "0", "--master-port", "29999",
                                                str(script)]), {})
    assert launch.uses_msrun(node0)


def test_tf_config_is_kept_for_the_resolvers_but_hidden_from_tensorflow(tmp_path):
    parser = argparse.ArgumentParser()
    launch.add_arguments(parser)
    script = tmp_path / "train.py"
    script.write_text("")
    raw = json.dumps({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}})
    plan = launch.make_plan(parser.parse_args(["--log-dir", str(tmp_path / "logs:odd"), str(script)]),
                            {"TF_CONFIG": raw})
    env = launch.worker_environment(plan, {"TF_CONFIG": raw, "PATH": "/bin"})
    assert "TF_CONFIG" not in env and env["MIGRATE_TF_CONFIG"] == raw
    assert (env["MIGRATE_NNODES"], env["MIGRATE_NODE_RANK"]) == ("2", "1")
    assert ":odd" not in env["PATH"].split(os.pathsep)[0]  # a log dir with ':' cannot go on PATH
    resolver = tfd.cluster_resolver.TFConfigClusterResolver()
    import unittest.mock

    with unittest.mock.patch.dict(os.environ, {"MIGRATE_TF_CONFIG": raw}, clear=False):
        os.environ.pop("TF_CONFIG", None)
        assert (resolver.task_type, resolver.task_id) == ("worker", 1)


def test_packed_plans_are_the_same_for_the_same_shapes():
    from migrate.runtime.fusion import Packed

    arrays = [np.zeros((2, 3), np.float32), np.zeros(4, np.float32), np.zeros(3, np.float16)]
    assert Packed(arrays, None).plan == (("float32", 10), ("float16", 3))
    assert Packed(arrays, 16).plan == (("float32", 6), ("float32", 4), ("float16", 3))
    assert Packed(arrays, "auto").plan == Packed([a + 1 for a in arrays], "auto").plan
