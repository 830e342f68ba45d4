from tests.sandbox.rpc.node import still  # noqa: F401 (the fixture)
