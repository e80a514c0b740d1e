import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from migrate.engine import convert  # noqa: E402
from migrate.engine.results import ConvertOptions  # noqa: E402

# A conversion of a pruned module that fails is the file's failure here, not done again on the
# whole file (which a run does, reporting an engine error): a right answer must not hide it.
# (Commands run as processes report it on stderr, which tests.cli_helpers.run_migrate checks.)
convert.DEFAULT_OPTIONS = ConvertOptions(fallback=False)


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _pynative_after_each_test():
    """A converted program run in this process may set GRAPH_MODE (the native tier's steps as
    cells): the next test in the worker runs in MindSpore's default mode, PyNative, again."""
    yield
    ms = sys.modules.get("mindspore")
    if ms is not None and ms.get_context("mode") != ms.PYNATIVE_MODE:
        ms.set_context(mode=ms.PYNATIVE_MODE)
