"""``tflogging.deprecated`` logs what TF's ``deprecation.deprecated`` logs (text, level, once per
function or every call) and gives the docstring TF gives; both sides run the same script."""

from __future__ import annotations

import pytest

from tests.helpers import python_json

PROGRAM = r'''
import json, logging, sys
if sys.argv[1] == "tf":
    from tensorflow.python.util import deprecation
    deprecated = deprecation.deprecated
else:
    from migrate.runtime import tflogging
    deprecated = tflogging.deprecated

records = []


class Keep(logging.Handler):
    def emit(self, record):
        records.append([record.levelname, record.getMessage()])


logging.getLogger("tensorflow").addHandler(Keep())


@deprecated(None, "Use `g` instead.")
def f(x):
    """Adds one.

    Args:
      x: a number.
    """
    return x + 1


@deprecated("2030-01-31", "Use `Other`.", warn_once=False)
class Old:
    """An old class."""

    def __init__(self, v):
        self.v = v


@deprecated(None, "Use `Newer`.")
class Older(Old):
    """A subclass of a deprecated class: TF leaves it as it is."""


class Holder:
    @deprecated(None, "Call `h`.")
    def method(self):
        return 3


values = [f(1), f(2), Old(4).v, Old(5).v, Holder().method(), Holder().method(), Older(6).v]
errors = []
for date, instructions in (("2030/01/01", "x"), (None, "")):
    try:
        deprecated(date, instructions)
    except ValueError as error:
        errors.append(str(error))
print(json.dumps({"values": values, "records": records, "errors": errors,
                  "docs": [f.__doc__, Old.__doc__, Holder.method.__doc__, Older.__doc__], "name": f.__name__}))
'''


def test_deprecated_logs_and_documents_as_tf():
    pytest.importorskip("tensorflow")
    tf_side = python_json(PROGRAM, "tf")
    ours = python_json(PROGRAM, "ms")
    assert len(tf_side["records"]) == 5  # f once, Old at each construction (Older's too), the method once
    assert ours == tf_side
