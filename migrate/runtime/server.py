"""`tf.distribute.Server` has no MindSpore counterpart.

A TF program starts a gRPC server in a process so that other processes can place ops
on it (parameter servers, `server.join()`). MindSpore has no in-process server: the
cluster is formed by MindSpore's own scheduler, which `migrate run` starts, and every
process runs the whole program (SPMD). The class exists so that converted code
imports and its names resolve; constructing one raises `NotImplementedError` saying
what to do instead.
"""

from __future__ import annotations

__all__ = ["Server"]

_SERVER_WHY = (
    "MindSpore has no in-process server: the cluster is formed by MindSpore's scheduler, which `migrate run` "
    "starts (`migrate run --nnodes N --node-rank K --master-addr HOST --master-port PORT`, or from TF_CONFIG), "
    "and every process runs the same program. Remove the Server (a parameter-server task that only calls "
    "server.join() is not needed at all) and start the workers with `migrate run`.")

class Server:
    """`tf.distribute.Server`: not available (see the module notes)."""

    def __init__(self, server_or_cluster_def=None, job_name=None, task_index=None, protocol=None, config=None,
                 start=True):
        raise NotImplementedError(f"migrate.runtime.Server: {_SERVER_WHY}")

    @staticmethod
    def create_local_server(config=None, start=True):
        raise NotImplementedError(f"migrate.runtime.Server.create_local_server: {_SERVER_WHY}")
