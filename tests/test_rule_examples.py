"""Every example of every rule is a test: output equals `after`, parses, and is stable."""

import pytest

from migrate.rules import load_rules
from tests.helpers import assert_converts

CASES = [
    pytest.param(ex.before, ex.after, id=f"{rule.id}-{rule.name}-{i}")
    for rule in load_rules()
    for i, ex in enumerate(rule.examples, 1)
]


@pytest.mark.parametrize("before,after", CASES)
def test_rule_example(before, after):
    assert_converts(before, after)
