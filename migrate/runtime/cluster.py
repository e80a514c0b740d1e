"""Cluster description: TF_CONFIG, cluster resolvers, and their mapping onto nodes.

`migrate run` translates a TF_CONFIG found in the environment: the chief and
worker tasks become nodes (chief first, then workers in index order), this task's
position is the node rank, and the first of them hosts the MindSpore scheduler
(master address and port). Parameter-server and evaluator tasks have no MindSpore
counterpart and are rejected with a message.

Importing this module does not import MindSpore (the launcher uses it).
"""

from __future__ import annotations

import enum
import json
import os
import warnings
from dataclasses import dataclass


def tf_config_from_env(environ=None) -> dict | None:
    """The parsed TF_CONFIG, or None when it is unset or empty.

    Under `migrate run` the launcher moves TF_CONFIG to MIGRATE_TF_CONFIG (so that a
    TensorFlow still imported by the program does not act on it); that is read too.
    """
    environ = environ if environ is not None else os.environ
    raw = (environ.get("TF_CONFIG", "") or environ.get("MIGRATE_TF_CONFIG", "")).strip()
    if not raw:
        return None
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"TF_CONFIG is not valid JSON: {exc}") from exc
    return config or None


def split_address(address: str) -> tuple[str, int | None]:
    """'host:port' or '[v6]:port' -> (host, port); port None when absent."""
    address = address.strip()
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    if address.count(":") == 1:
        host, port = address.split(":")
        return host, int(port)
    return address, None


@dataclass(frozen=True)
class NodePlan:
    """Where this node sits in a multi-node job."""

    nnodes: int
    node_rank: int
    master_addr: str
    master_port: int | None


def nodes_from_tf_config(tf_config: dict) -> NodePlan:
    """Translate TF_CONFIG: workers -> nodes, task index -> node rank, first worker -> master."""
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    chiefs = list(cluster.get("chief", []))
    workers = chiefs + list(cluster.get("worker", []))
    if not workers:
        raise ValueError("TF_CONFIG lists no 'chief' or 'worker' tasks, so there is no node to launch")
    task_type = task.get("type", "worker")
    index = int(task.get("index", 0))
    if task_type == "chief":
        node_rank = index
    elif task_type == "worker":
        node_rank = len(chiefs) + index
    else:
        raise ValueError(
            f"TF_CONFIG task type {task_type!r} has no MindSpore counterpart: only 'chief' and 'worker' "
            "tasks run training processes (parameter servers and evaluators are not launched)")
    if not 0 <= node_rank < len(workers):
        raise ValueError(f"TF_CONFIG task index {index} is out of range for {len(workers)} worker tasks")
    host, port = split_address(workers[0])
    return NodePlan(len(workers), node_rank, host, port)


class ClusterSpec:
    """Minimal `tf.train.ClusterSpec`: job name -> task addresses."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        self._cluster = {job: (dict(tasks) if isinstance(tasks, dict) else dict(enumerate(tasks)))
                         for job, tasks in (cluster or {}).items()}

    def as_dict(self) -> dict:
        out = {}
        for job, tasks in self._cluster.items():
            indices = sorted(tasks)
            out[job] = [tasks[i] for i in indices] if indices == list(range(len(indices))) else dict(tasks)
        return out

    @property
    def jobs(self) -> list:
        return list(self._cluster)

    def num_tasks(self, job_name: str) -> int:
        return len(self._cluster[job_name])

    def task_indices(self, job_name: str) -> list:
        return sorted(self._cluster[job_name])

    def task_address(self, job_name: str, task_index: int) -> str:
        return self._cluster[job_name][task_index]

    def job_tasks(self, job_name: str) -> list:
        return self.as_dict()[job_name]

    def __bool__(self) -> bool:
        return bool(self._cluster)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"


class ClusterResolver:
    """Base of the cluster resolvers: where the tasks are and which one this is."""

    _task_type: str | None = None
    _task_id: int | None = None
    _rpc_layer: str | None = None
    _environment: str = ""

    @property
    def task_type(self):
        return self._task_type

    @task_type.setter
    def task_type(self, value):
        self._task_type = value

    @property
    def task_id(self):
        return self._task_id

    @task_id.setter
    def task_id(self, value):
        self._task_id = value

    @property
    def rpc_layer(self):
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, value):
        self._rpc_layer = value

    @property
    def environment(self):
        return self._environment

    @environment.setter
    def environment(self, value):
        self._environment = value

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        spec = self.cluster_spec()
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None or task_type not in spec.jobs:
            return ""
        address = spec.task_address(task_type, task_id)
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {}


class TFConfigClusterResolver(ClusterResolver):
    """Reads the cluster and this task from the TF_CONFIG environment variable."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    def _config(self) -> dict:
        return tf_config_from_env() or {}

    @property
    def task_type(self):
        return self._task_type if self._task_type is not None else (self._config().get("task") or {}).get("type")

    @task_type.setter
    def task_type(self, value):
        self._task_type = value

    @property
    def task_id(self):
        if self._task_id is not None:
            return self._task_id
        index = (self._config().get("task") or {}).get("index")
        return None if index is None else int(index)

    @task_id.setter
    def task_id(self, value):
        self._task_id = value

    @property
    def rpc_layer(self):
        return self._rpc_layer if self._rpc_layer is not None else self._config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value):
        self._rpc_layer = value

    @property
    def environment(self):
        return self._environment if self._environment is not None else self._config().get("environment", "")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(self._config().get("cluster") or {})


class SimpleClusterResolver(ClusterResolver):
    """A resolver over a given ClusterSpec (or dict)."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        self._spec = ClusterSpec(cluster_spec)
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment, self.rpc_layer = environment, rpc_layer
        self._num_accelerators = num_accelerators or {}

    def cluster_spec(self) -> ClusterSpec:
        return self._spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return self._master

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return dict(self._num_accelerators)


class TPUClusterResolver(ClusterResolver):
    """Accepted for source compatibility; there are no TPUs, the cluster is empty."""

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker", coordinator_name=None,
                 coordinator_address=None, credentials="default", service=None, discovery_url=None):
        warnings.warn("migrate.runtime.TPUClusterResolver: there are no TPUs here; the resolver is empty "
                      "and `migrate run` chooses the devices", UserWarning, stacklevel=2)
        self.task_type, self.task_id = job_name, 0

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec({})

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        return ""

    @staticmethod
    def connect(*args, **kwargs):
        return TPUClusterResolver(*args, **kwargs)


# --- resolvers for cluster managers: they report the job `migrate run` launched ------------

def launched_job(environ=None) -> tuple[int, int, int]:
    """(nodes, this node's rank, processes per node) of the job `migrate run` launched (1, 0, 1 without it)."""
    environ = environ if environ is not None else os.environ
    return (int(environ.get("MIGRATE_NNODES", "1") or 1), int(environ.get("MIGRATE_NODE_RANK", "0") or 0),
            int(environ.get("MIGRATE_NPROC_PER_NODE", "1") or 1))


def launched_cluster_spec(job_name: str = "worker", environ=None) -> ClusterSpec:
    """The launched job as a ClusterSpec: its TF_CONFIG if it came with one, else one task per node.

    Without TF_CONFIG only node 0's address is known (the master); the other nodes are
    named ``node<k>``.
    """
    config = tf_config_from_env(environ)
    if config and config.get("cluster"):
        return ClusterSpec(config["cluster"])
    environ = environ if environ is not None else os.environ
    nodes, _, _ = launched_job(environ)
    master = environ.get("MIGRATE_MASTER_ADDR", "127.0.0.1")
    port = environ.get("MIGRATE_MASTER_PORT")
    first = f"{master}:{port}" if port else master
    return ClusterSpec({job_name: [first] + [f"node{k}" for k in range(1, nodes)]})


class _LaunchedJobResolver(ClusterResolver):
    """A cluster-manager resolver: the launcher found the cluster already, so report the launched job."""

    _manager = "the cluster manager"

    def __init__(self, job_name: str = "worker", rpc_layer: str | None = "grpc"):
        nodes, node_rank, nproc = launched_job()
        self.task_type, self.task_id, self.rpc_layer = job_name, node_rank, rpc_layer
        self._job_name, self._nproc = job_name, nproc

    def cluster_spec(self) -> ClusterSpec:
        return launched_cluster_spec(self._job_name)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        device = os.environ.get("MIGRATE_DEVICE", "CPU")
        return {} if device.upper() in ("CPU", "AUTO") else {device.upper(): self._nproc}


class SlurmClusterResolver(_LaunchedJobResolver):
    """`tf.distribute.cluster_resolver.SlurmClusterResolver`: reports the launched job.

    Under Slurm, start one `migrate run` per node (e.g. ``srun --ntasks-per-node=1 migrate
    run -n GPUS --nnodes $SLURM_NNODES --node-rank $SLURM_NODEID --master-addr <first host>
    --master-port P train.py``); the resolver then reports that job. The node rank comes
    from ``SLURM_NODEID``/``SLURM_PROCID`` when the program was not started by `migrate run`.
    """

    def __init__(self, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None, tasks_per_node=None,
                 auto_set_gpu=True, rpc_layer="grpc"):
        job_name = next(iter(jobs)) if jobs else "worker"
        super().__init__(job_name, rpc_layer)
        if "MIGRATE_NODE_RANK" not in os.environ:
            slurm_rank = os.environ.get("SLURM_NODEID") or os.environ.get("SLURM_PROCID")
            if slurm_rank is not None and slurm_rank.isdigit():
                self.task_id = int(slurm_rank)


class KubernetesExecutableLocation(enum.Enum):
    """Where the program runs relative to the Kubernetes cluster (accepted; no effect here)."""

    WITHIN_CLUSTER = 0
    OFF_CLUSTER = 1


class KubernetesClusterResolver(_LaunchedJobResolver):
    """`tf.distribute.cluster_resolver.KubernetesClusterResolver`: reports the launched job.

    No Kubernetes API is queried: start one `migrate run` per pod (its TF_CONFIG, as set by
    the TF operator, is translated), and the resolver reports that job.
    """

    def __init__(self, job_to_label_mapping=None, tf_server_port=8470, rpc_layer="grpc", override_client=None,
                 executable_location=KubernetesExecutableLocation.WITHIN_CLUSTER):
        job_name = next(iter(job_to_label_mapping)) if job_to_label_mapping else "worker"
        super().__init__(job_name, rpc_layer)


class GCEClusterResolver(_LaunchedJobResolver):
    """`tf.distribute.cluster_resolver.GCEClusterResolver`: reports the launched job (no GCE API call)."""

    def __init__(self, project=None, zone=None, instance_group=None, port=None, task_type="worker", task_id=0,
                 rpc_layer="grpc", credentials="default", service=None):
        super().__init__(task_type, rpc_layer)
        if "MIGRATE_NODE_RANK" not in os.environ:
            self.task_id = task_id


class UnionResolver(ClusterResolver):
    """`tf.distribute.cluster_resolver.UnionResolver`: the union of other resolvers' clusters.

    Jobs of every resolver are merged (a job in several resolvers must not repeat a task
    index); task type, task id, RPC layer and master come from the first resolver.
    """

    def __init__(self, *args, **kwargs):
        self._resolvers = list(args)
        if not self._resolvers:
            raise ValueError("At least one ClusterResolver is required.")
        if not all(isinstance(r, ClusterResolver) for r in self._resolvers):
            raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        first = self._resolvers[0]
        self.task_type = kwargs.get("task_type", first.task_type)
        self.task_id = kwargs.get("task_id", first.task_id)
        self.rpc_layer = kwargs.get("rpc_layer", first.rpc_layer)

    def cluster_spec(self) -> ClusterSpec:
        merged: dict = {}
        for resolver in self._resolvers:
            for job, tasks in resolver.cluster_spec().as_dict().items():
                tasks = tasks if isinstance(tasks, dict) else dict(enumerate(tasks))
                target = merged.setdefault(job, {})
                for index, address in tasks.items():
                    if index in target:
                        raise KeyError(f"Duplicate keys detected when merging two ClusterSpecs: job {job!r}, "
                                       f"task {index}")
                    target[index] = address
        return ClusterSpec(merged)

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return self._resolvers[0].num_accelerators(task_type, task_id, config_proto)
