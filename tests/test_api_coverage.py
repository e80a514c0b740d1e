"""Every public name of TensorFlow's tf.distribute API has somewhere to go.

For each module-level name (``tf.distribute``, ``.experimental``, ``.cluster_resolver``,
``.coordinator``, ``.experimental.coordinator``/``partitioners``/``rpc``, and the members
of its enums) a one-line program ``x = tf.distribute.<path>`` is converted with every
rule. The result must no longer use TensorFlow and must either name something that
really exists (an attribute chain on ``migrate.runtime`` or another imported module,
e.g. ``mindspore.ops.ReduceOp.SUM``) or carry a ``manual`` finding (a rule that flags
the name for a person).

For the classes, every public method and property of TF's class must exist on the
shim's counterpart, or be listed in UNSUPPORTED with the reason; those raise
NotImplementedError with a message, never AttributeError.

Single process, no launcher; skipped without TensorFlow.
"""

from __future__ import annotations

import ast
import enum
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

import migrate.runtime as tfd  # noqa: E402
from migrate.engine.runner import RuleSelection, convert_source, rule_index  # noqa: E402

MODULES = ["", "experimental", "cluster_resolver", "coordinator", "experimental.coordinator",
           "experimental.partitioners", "experimental.rpc"]

# TF member -> why the shim does not offer it. Each is still an attribute of the shim's class and
# raises NotImplementedError with the reason when used.
UNSUPPORTED: dict[str, str] = {}


def _tf_object(path: str):
    value = tf.distribute
    for part in filter(None, path.split(".")):
        value = getattr(value, part)
    return value


def _public(obj) -> list[str]:
    return sorted(name for name in dir(obj) if not name.startswith("_"))


def module_level_paths() -> list[str]:
    paths = []
    for module in MODULES:
        for name in _public(_tf_object(module)):
            path = f"{module}.{name}" if module else name
            paths.append(path)
            value = _tf_object(path)
            if inspect.isclass(value) and issubclass(value, enum.Enum):
                paths += [f"{path}.{member.name}" for member in value]
    return sorted(set(paths))


def _convert(path: str):
    source = f"import tensorflow as tf\nx = tf.distribute.{path}\n".encode()
    return convert_source(source, rule_index(RuleSelection()), "snippet.py")


def _evaluate(converted: str):
    """Run the converted program's imports, then evaluate the right-hand side of `x = ...`."""
    tree = ast.parse(converted)
    namespace: dict = {}
    target = None
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            exec(compile(ast.Module([node], []), "<imports>", "exec"), namespace)  # noqa: S102
        elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["x"]:
            target = node.value
    assert target is not None, converted
    chain = target
    while isinstance(chain, ast.Attribute):
        chain = chain.value
    assert isinstance(chain, ast.Name), f"not a plain name or attribute chain: {ast.unparse(target)}"
    return ast.unparse(target), eval(compile(ast.Expression(target), "<x>", "eval"), namespace)  # noqa: S307


@pytest.mark.parametrize("path", module_level_paths())
def test_module_level_name_converts_to_something_real_or_is_flagged(path):
    result = _convert(path)
    assert result.status in ("changed", "unchanged"), result.error
    converted = result.converted.decode()
    assert "tensorflow" not in converted and "tf.distribute" not in converted, converted
    if any(finding.status == "manual" for finding in result.findings):
        return  # (b) a rule flags it for a person
    expression, value = _evaluate(converted)  # (a) raises AttributeError if the target does not exist
    assert value is not None or expression.endswith("None"), expression
    tf_value = _tf_object(path)
    if inspect.isclass(tf_value) and not issubclass(tf_value, enum.Enum):
        assert callable(value), f"{path} -> {expression} is not a class or factory"


# --- classes ---------------------------------------------------------------------------------

CLASSES = {
    # required
    "Strategy": tfd.Strategy,
    "StrategyExtended": tfd.StrategyExtended,
    "ReplicaContext": tfd.ReplicaContext,
    "InputContext": tfd.InputContext,
    # the concrete strategies and the other classes programs call methods on
    "MirroredStrategy": tfd.MirroredStrategy,
    "OneDeviceStrategy": tfd.OneDeviceStrategy,
    "MultiWorkerMirroredStrategy": tfd.MultiWorkerMirroredStrategy,
    "TPUStrategy": tfd.TPUStrategy,
    "ParameterServerStrategy": tfd.ParameterServerStrategy,
    "experimental.CentralStorageStrategy": tfd.experimental.CentralStorageStrategy,
    "DistributedDataset": tfd.DistributedDataset,
    "DistributedIterator": tfd.DistributedIterator,
    "CrossDeviceOps": tfd.CrossDeviceOps,
    "experimental.ValueContext": tfd.experimental.ValueContext,
    "cluster_resolver.ClusterResolver": tfd.cluster_resolver.ClusterResolver,
    "cluster_resolver.TFConfigClusterResolver": tfd.cluster_resolver.TFConfigClusterResolver,
    "experimental.coordinator.ClusterCoordinator": tfd.experimental.coordinator.ClusterCoordinator,
    "experimental.coordinator.RemoteValue": tfd.experimental.coordinator.RemoteValue,
    "experimental.PreemptionCheckpointHandler": tfd.experimental.PreemptionCheckpointHandler,
    "experimental.PreemptionWatcher": tfd.experimental.PreemptionWatcher,
}


def class_members() -> list[tuple[str, str]]:
    return [(path, name) for path in CLASSES for name in _public(_tf_object(path))]


def _is_property(cls, name) -> bool:
    return any(isinstance(klass.__dict__.get(name), property) for klass in inspect.getmro(cls))


@pytest.mark.parametrize("path, name", class_members())
def test_class_member_exists_on_the_shim_or_is_unsupported_with_reason(path, name):
    shim = CLASSES[path]
    key = f"{path}.{name}"
    if key in UNSUPPORTED:
        member = getattr(shim, name)  # present, so never an AttributeError
        with pytest.raises(NotImplementedError, match=UNSUPPORTED[key][:20]):
            member() if callable(member) else None
        return
    assert hasattr(shim, name) or name in _instance_attributes(shim), f"{key} is missing from {shim.__qualname__}"
    tf_class = _tf_object(path)
    if _is_property(tf_class, name) and hasattr(shim, name):
        assert _is_property(shim, name), f"{key} is a property in TF but not on {shim.__qualname__}"
    elif callable(getattr(tf_class, name, None)) and hasattr(shim, name) and not _is_property(shim, name):
        assert callable(getattr(shim, name)), f"{key} is a method in TF but not on {shim.__qualname__}"


def _instance_attributes(cls) -> set:
    """Attributes set in __init__ (e.g. a resolver's task_type), read from a default instance."""
    try:
        instance = cls.__new__(cls)
        cls.__init__(instance)
    except Exception:  # noqa: BLE001 - classes that need arguments have none to report
        return set()
    return set(vars(instance))


# --- behaviour of what was added for coverage (single process) --------------------------------

def test_strategy_tf1_methods_run_on_this_replica():
    strategy = tfd.MirroredStrategy()
    import numpy as np

    iterator = strategy.make_dataset_iterator([np.arange(4), np.arange(4, 8)])
    assert iterator.initialize() == []
    assert strategy.experimental_run(lambda batch: batch.sum(), iterator) == 6
    assert strategy.experimental_run(lambda: 3) == 3
    fn_iterator = strategy.make_input_fn_iterator(lambda ctx: [np.arange(2) + ctx.input_pipeline_id])
    assert fn_iterator.get_next().tolist() == [0, 1]
    assert strategy.unwrap(5) == (5,)
    assert strategy.group(5) is None
    with strategy.colocate_vars_with(None):
        pass
    assert [b.tolist() for b in strategy.experimental_make_numpy_dataset(np.arange(5)).batch(2)] == [[0, 1], [2, 3], [4]]


def test_distributed_iterator_optional_and_end():
    import numpy as np

    dataset = tfd.distribute_dataset([np.array([1, 2])])
    iterator = iter(dataset)
    assert iterator.get_next_as_optional().get_value().tolist() == [1, 2]
    assert not iterator.get_next_as_optional().has_value()
    with pytest.raises(StopIteration):
        iter(tfd.distribute_dataset([])).get_next()


def test_coordinator_runs_scheduled_functions_synchronously():
    strategy = tfd.ParameterServerStrategy.__new__(tfd.ParameterServerStrategy)
    tfd.Strategy.__init__(strategy)
    with pytest.warns(UserWarning, match="synchronously"):
        coordinator = tfd.experimental.coordinator.ClusterCoordinator(strategy)
    assert coordinator.strategy is strategy
    per_worker = coordinator.create_per_worker_dataset(lambda ctx: [[1.0, 2.0], [3.0]])
    iterator = iter(per_worker)
    value = coordinator.schedule(lambda it: sum(next(it)), args=(iterator,))
    assert coordinator.fetch(value) == 3.0 and value.get() == 3.0
    failed = coordinator.schedule(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        coordinator.join()
    with pytest.raises(ZeroDivisionError):
        failed.fetch()
    assert coordinator.done()
    assert tfd.coordinator.experimental_get_current_worker_index() == 0


def test_servers_and_rpc_raise_a_clear_error():
    with pytest.raises(NotImplementedError, match="MindSpore has no in-process server"):
        tfd.Server({"worker": ["localhost:2222"]})
    with pytest.raises(NotImplementedError, match="no in-process server"):
        tfd.Server.create_local_server()
    with pytest.raises(NotImplementedError, match="no MindSpore counterpart"):
        tfd.experimental.rpc.Server.create("grpc", "localhost:2222")
    with pytest.raises(NotImplementedError, match="no MindSpore counterpart"):
        tfd.experimental.rpc.Client.create("grpc", "localhost:2222")


@pytest.mark.parametrize("name, args", [("FixedShardsPartitioner", (3,)), ("MinSizePartitioner", (1024, 8)),
                                        ("MaxSizePartitioner", (4096,)), ("MaxSizePartitioner", (4096, 2))])
@pytest.mark.parametrize("shape, dtype", [((10, 3), "float32"), ((1024, 16), "float32"), ((7,), "float64"),
                                          ((2, 64), "int32")])
def test_partitioners_give_tfs_partitions(name, args, shape, dtype):
    theirs = getattr(tf.distribute.experimental.partitioners, name)(*args)(tf.TensorShape(shape), getattr(tf, dtype))
    ours = getattr(tfd.experimental.partitioners, name)(*args)(shape, dtype)
    assert list(ours) == list(theirs)


def test_cluster_resolvers_report_the_launched_job(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    monkeypatch.delenv("MIGRATE_TF_CONFIG", raising=False)
    monkeypatch.setenv("MIGRATE_NNODES", "2")
    monkeypatch.setenv("MIGRATE_NODE_RANK", "1")
    monkeypatch.setenv("MIGRATE_MASTER_ADDR", "10.0.0.1")
    monkeypatch.setenv("MIGRATE_MASTER_PORT", "2222")
    resolvers = tfd.cluster_resolver
    for resolver in (resolvers.SlurmClusterResolver(), resolvers.KubernetesClusterResolver(),
                     resolvers.GCEClusterResolver("project", "zone", "group", 2222)):
        assert (resolver.task_type, resolver.task_id) == ("worker", 1)
        assert resolver.cluster_spec().as_dict() == {"worker": ["10.0.0.1:2222", "node1"]}
    union = resolvers.UnionResolver(
        resolvers.SimpleClusterResolver({"worker": ["a:1"]}, task_type="worker", task_id=0),
        resolvers.SimpleClusterResolver({"ps": ["b:2"]}))
    assert union.cluster_spec().as_dict() == {"worker": ["a:1"], "ps": ["b:2"]}
    assert (union.task_type, union.task_id) == ("worker", 0)
    assert [m.name for m in resolvers.KubernetesExecutableLocation] == ["WITHIN_CLUSTER", "OFF_CLUSTER"]


def test_preemption_handler_saves_and_exits_when_terminated():
    saved, exited = [], []
    config = tfd.experimental.TerminationConfig(termination_watcher_fn=lambda: len(saved) == 0 and steps[0] >= 2,
                                                exit_fn=lambda: exited.append(True))

    class Manager:
        checkpoint = object()

        def save(self):
            saved.append(steps[0])

    steps = [0]
    handler = tfd.experimental.PreemptionCheckpointHandler(None, Manager(), termination_config=config)

    def step():
        steps[0] += 1
        return steps[0]

    for _ in range(4):
        handler.run(step)
    assert saved == [2] and exited == [True] and handler.total_run_calls == 4
    assert tfd.experimental.PreemptionWatcher().preemption_message is None
    with handler.watch_preemption_scope():
        pass


def test_run_options_are_accepted():
    strategy = tfd.MirroredStrategy()
    assert strategy.run(lambda: 7, options=tfd.RunOptions(experimental_enable_dynamic_batch_size=False)) == 7
    assert tfd.experimental.CollectiveHints(bytes_per_pack=1024).bytes_per_pack == 1024


def test_the_runtime_still_imports_without_mindspore_and_tensorflow():
    code = ("import sys, migrate.runtime as t; t.experimental.coordinator, t.experimental.rpc, t.Server; "
            "print('mindspore' in sys.modules, 'tensorflow' in sys.modules)")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                               cwd=Path(__file__).resolve().parents[1])
    assert completed.stdout.split() == ["False", "False"], completed.stderr
