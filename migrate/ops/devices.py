"""Device queries: ``tf.config.list_physical_devices(...)`` answered for this process's device.

Its value is used by other code, so it is renamed to the runtime's answer
(``tfenv.list_physical_devices``). When the only readers of the name it is bound to are
set-up calls that are removed (``cpu = ...list_physical_devices("CPU")[0]`` feeding
``set_logical_device_configuration(cpu, ...)``), the binding goes with them.
"""

from __future__ import annotations

from migrate.ops.base import Param
from migrate.ops.names import Rename


class SetupQuery(Rename):
    name = "setup_query"
    goes_with_readers = True
    params = {
        "to": Param(str, required=True, doc="dotted name of the runtime's answer; 'x.*' keeps the matched last name"),
        "reason": Param(str, required=True, doc="the comment left where a binding read only by removed set-up calls goes away"),
    }
