"""The built wheel works on its own: rules load from inside it, not from a source checkout.

Builds the wheel from a copy of the packaging inputs, installs it (without
dependencies) into a fresh virtual environment that borrows libcst/PyYAML/Jinja2
from the test interpreter's site-packages, and runs the installed ``migrate``
console script from a directory outside the repository with no PYTHONPATH.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.cli_helpers import ROOT, TF_SOURCE, write
from tests.helpers import convert

pytestmark = pytest.mark.timeout(180)

PACKAGING_INPUTS = ("pyproject.toml", "README.md", "migrate", "rules")


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(cmd: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=170, **kwargs)
    assert proc.returncode == 0 or kwargs.get("check") is False, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin/ directory of a fresh venv with only the built wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    missing = [name for name in PACKAGING_INPUTS if not (ROOT / name).exists()]
    if missing:
        pytest.fail(f"cannot build the wheel: {', '.join(missing)} missing from the checkout (pyproject.toml refers to them)")

    # Build from a copy: nothing is written into the checkout, no stray build/ or _rules/.
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_rules", ".pytest_cache")
    for name in PACKAGING_INPUTS:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    dist = tmp / "dist"
    build = [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist)]
    if importlib.util.find_spec("hatchling") is not None:
        build.append("--no-isolation")  # offline and faster when the backend is at hand
    _run([*build, str(src)], cwd=tmp)
    (wheel,) = dist.glob("*.whl")

    names = zipfile.ZipFile(wheel).namelist()
    assert "migrate/_rules/strategy/TFD101-mirrored-strategy.yaml" in names
    assert "migrate/cli.py" in names
    assert not any(n.startswith(("tests/", "rules/")) for n in names)

    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    env_python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    # The dependencies come from the test interpreter (no network); migrate itself is not there.
    site = Path(_run([str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).stdout.strip())
    parents = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "_test_dependencies.pth").write_text("".join(f"{p}\n" for p in parents))
    _run([sys.executable, "-m", "pip", "--python", str(env_python), "install", "--no-deps", "--no-index", "--quiet", str(wheel)], cwd=tmp)
    return bin_dir


def test_installed_migrate_is_the_wheel_not_the_checkout(installed, tmp_path):
    python = installed / "python"
    code = "import migrate, migrate.rules as r; print(migrate.__file__); print(r.default_rules_dir())"
    module_file, rules_dir = _run([str(python), "-c", code], cwd=tmp_path).stdout.splitlines()
    venv_root = installed.parent.resolve()
    assert Path(module_file).resolve().is_relative_to(venv_root), module_file
    assert Path(rules_dir).resolve().is_relative_to(venv_root) and Path(rules_dir).name == "_rules", rules_dir
    assert not Path(rules_dir).resolve().is_relative_to(ROOT.resolve())


def test_installed_console_script_converts_outside_the_repo(installed, tmp_path):
    work = tmp_path / "project"
    train = write(work / "train.py", TF_SOURCE)
    expected, _ = convert(TF_SOURCE)

    proc = _run([str(installed / "migrate"), "convert", "train.py"], cwd=work)
    assert train.read_text() == expected
    assert "1 file(s) changed" in proc.stderr

    rules = _run([str(installed / "migrate"), "rules", "TFD101"], cwd=work)
    assert rules.stdout.startswith("TFD101 mirrored-strategy")

    check = _run([str(installed / "migrate"), "check", "train.py"], cwd=work, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
