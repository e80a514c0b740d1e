"""Write docs/rules.md from the bundled rules: every rule as `migrate rules ID` explains it.

    .venv/bin/python scripts/rules_page.py            # print the page
    .venv/bin/python scripts/rules_page.py --write    # rewrite docs/rules.md

tests/test_docs.py fails while the page in the tree differs from what this prints, so a
changed rule file goes with its regenerated page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from migrate.docs import rules_page  # noqa: E402
from migrate.rules import load_rules  # noqa: E402

PAGE = REPO / "docs" / "rules.md"


def render() -> str:
    """The page for the bundled rules only: rules-dirs of a project's own configuration are its own."""
    return rules_page(load_rules())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {PAGE.relative_to(REPO)} instead of printing")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        PAGE.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {PAGE.relative_to(REPO)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
