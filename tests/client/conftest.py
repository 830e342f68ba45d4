"""The client's tests drive `yield` too: the command line's fixtures, shared."""

from tests.cli.conftest import chain  # noqa: F401 (a fixture: `yield` against the served sandbox, as the demo wallet)
