"""Device queries: ``tf.config.list_physical_devices(...)`` has no MindSpore counterpart under a launcher.

Its value is used by other code, so it cannot just go away; it is reported. When the
only readers of the name it is bound to are set-up calls that are removed
(``cpu = ...list_physical_devices("CPU")[0]`` feeding ``set_logical_device_configuration(cpu, ...)``),
the binding goes with them.
"""

from __future__ import annotations

from migrate.ops.base import Param
from migrate.ops.names import Flag


class FlagSetupQuery(Flag):
    name = "flag_setup_query"
    goes_with_readers = True
    makes_tf_values = False  # PhysicalDevice records: their names are strings
    params = {
        "message": Param(str, required=True, doc="what a person has to do with a query whose value is used"),
        "reason": Param(str, required=True, doc="the comment left where a binding read only by removed set-up calls goes away"),
    }
