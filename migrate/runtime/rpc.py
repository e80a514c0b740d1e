"""`tf.distribute.experimental.rpc` has no MindSpore counterpart.

TF's RPC lets one process call functions registered in another. Processes started by
`migrate run` do not serve function calls to each other (every process runs the same
program and they exchange values through collectives). The classes exist so that
names resolve; creating a server or client raises `NotImplementedError` saying what
to do instead.
"""

from __future__ import annotations

__all__ = ["Server", "Client"]

_RPC_WHY = (
    "tf.distribute.experimental.rpc has no MindSpore counterpart: processes started by `migrate run` do not "
    "serve function calls to each other. Exchange values with collectives instead (migrate.runtime.all_reduce, "
    "gather, broadcast_parameters).")


class Server:
    """`tf.distribute.experimental.rpc.Server`: not available (see the module notes)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"migrate.runtime.experimental.rpc.Server: {_RPC_WHY}")

    @staticmethod
    def create(rpc_layer, address):
        raise NotImplementedError(f"migrate.runtime.experimental.rpc.Server.create: {_RPC_WHY}")


class Client:
    """`tf.distribute.experimental.rpc.Client`: not available (see the module notes)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"migrate.runtime.experimental.rpc.Client: {_RPC_WHY}")

    @staticmethod
    def create(rpc_layer, address, name="", timeout_in_ms=0):
        raise NotImplementedError(f"migrate.runtime.experimental.rpc.Client.create: {_RPC_WHY}")
