"""Fails at once, at import, on every rank (and in msrun's scheduler, which runs it too)."""

import migrate_test_module_that_does_not_exist  # noqa: F401
