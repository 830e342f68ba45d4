from tests.sandbox.rpc.node import node  # noqa: F401 (the fixture)
