"""One sandbox and its cast for every fuzzer test of the session: building it takes a few seconds, and
every case puts back what it changed."""

from __future__ import annotations

import pytest

from tests.guard.bases import legitimate_bases
from tests.guard.fuzzer import Base
from tests.guard.world import World, build_world


@pytest.fixture(scope="session")
def fuzz_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = build_world(tmp_path_factory.mktemp("fuzz-sandbox"))
    yield world
    world.server.stop()


@pytest.fixture(scope="session")
def bases(fuzz_world: World) -> list[Base]:
    return legitimate_bases(fuzz_world)
