"""`tf.distribute.experimental` counterparts."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from . import coordinator, partitioners, rpc
from .data import ValueContext
from .preemption import PreemptionCheckpointHandler, PreemptionWatcher, TerminationConfig
from .strategies import (CentralStorageStrategy, MultiWorkerMirroredStrategy, ParameterServerStrategy,
                         TPUStrategy)


class CommunicationImplementation(enum.Enum):
    """Collective implementation hint; MindSpore chooses by device, so it has no effect."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CollectiveCommunication = CommunicationImplementation


@dataclass
class CommunicationOptions:
    """`tf.distribute.experimental.CommunicationOptions`; accepted, with no effect here."""

    bytes_per_pack: int = 0
    timeout_seconds: float | None = None
    implementation: CommunicationImplementation = CommunicationImplementation.AUTO


@dataclass
class CollectiveHints:
    """`tf.distribute.experimental.CollectiveHints` (TF's deprecated CommunicationOptions); no effect here."""

    bytes_per_pack: int = 0
    timeout_seconds: float | None = None


__all__ = ["CentralStorageStrategy", "MultiWorkerMirroredStrategy", "ParameterServerStrategy", "TPUStrategy",
           "CommunicationOptions", "CommunicationImplementation", "CollectiveCommunication", "CollectiveHints",
           "ValueContext", "PreemptionCheckpointHandler", "PreemptionWatcher", "TerminationConfig", "coordinator",
           "partitioners", "rpc"]
