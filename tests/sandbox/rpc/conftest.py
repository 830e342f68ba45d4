from tests.sandbox.rpc.node import node, still  # noqa: F401 (the fixtures)
