"""Write docs/rules.md from the bundled rules: every rule as `migrate rules ID` explains it.

    .venv/bin/python scripts/rules_page.py            # print the page
    .venv/bin/python scripts/rules_page.py --write    # rewrite docs/rules.md

tests/test_docs.py fails while the page in the tree differs from what this prints, so a
changed rule file goes with its regenerated page.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from migrate.docs import rules_page  # noqa: E402
from migrate.rules import load_rules  # noqa: E402

PAGE = REPO / "docs" / "rules.md"


def render() -> str:
    """The page for the bundled rules only: rules-dirs of a project's own configuration are its own."""
    return rules_page(load_rules())


def main(argv: list[str] | None = None) -> int:
    from generated_file import main as generate

    return generate(__doc__.splitlines()[0], render, PAGE, REPO, argv)


if __name__ == "__main__":
    sys.exit(main())
