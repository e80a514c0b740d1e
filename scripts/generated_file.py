"""The command line of the scripts that generate a file of the tree: print it, or ``--write`` it.

The tests fail while the file in the tree differs from what its script prints, so a change
that affects it goes with the file regenerated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable


def main(description: str, render: Callable[[], str], target: Path, repo: Path, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write", action="store_true", help=f"rewrite {target.relative_to(repo)} instead of printing")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        target.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {target.relative_to(repo)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
