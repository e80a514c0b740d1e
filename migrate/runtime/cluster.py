"""Cluster description: TF_CONFIG, cluster resolvers, and their mapping onto nodes.

`migrate run` translates a TF_CONFIG found in the environment: the chief and
worker tasks become nodes (chief first, then workers in index order), this task's
position is the node rank, and the first of them hosts the MindSpore scheduler
(master address and port). Parameter-server and evaluator tasks have no MindSpore
counterpart and are rejected with a message.

Importing this module does not import MindSpore (the launcher uses it).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass


def tf_config_from_env(environ=None) -> dict | None:
    """The parsed TF_CONFIG, or None when it is unset or empty."""
    raw = (environ if environ is not None else os.environ).get("TF_CONFIG", "").strip()
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

    task_type: str | None = None
    task_id: int | None = None
    rpc_layer: str | None = None
    environment: str = ""

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
