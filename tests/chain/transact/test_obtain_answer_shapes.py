"""Every shape a `/tx` answer has been seen in is read as the transaction it holds, through the command
line and the library alike: the stand-in service reshapes the sandbox's answer before `yield` reads it."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from yieldcli import Confirmed

SHAPES = {
    "json string": lambda tx: (json.dumps(tx).encode(), "application/json"),
    "bare base64": lambda tx: (tx.encode() + b"\n", "text/plain"),
    "result": lambda tx: (json.dumps({"result": tx}).encode(), "application/json"),
    "transaction": lambda tx: (json.dumps({"transaction": tx}).encode(), "application/json"),
    "success and result": lambda tx: (json.dumps({"success": True, "result": tx}).encode(), "application/json"),
    "encoded_transaction": lambda tx: (json.dumps({"encoded_transaction": tx}).encode(), "application/json"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_tx_answer_shape_gives_the_transaction(world, shape):
    answers: list[str] = []

    def reshape(tx: str):
        answers.append(tx)
        return SHAPES[shape](tx)

    world.stand_in.reshape = reshape
    result = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["transaction"] == answers[-1]


def test_a_shape_is_read_by_the_library_and_lands(world):
    world.stand_in.reshape = SHAPES["success and result"]
    with world.client() as client:
        outcome = client.deposit("USDC", Decimal("1")).send(confirm=lambda *asked: True)
    assert isinstance(outcome, Confirmed) and outcome.status == "confirmed"
    assert world.runtime.status(outcome.signature).err is None


@pytest.mark.parametrize(
    "body, content_type, said",
    [
        (b'{"success": false, "message": "strategy is paused"}', "application/json", "strategy is paused"),
        (b'{"success": true}', "application/json", "without a transaction"),
        (b"<html>maintenance</html>", "text/html", "not JSON"),
    ],
)
def test_an_answer_without_a_transaction_is_one_clear_line(world, body, content_type, said):
    world.stand_in.reshape = lambda tx: (body, content_type)
    result = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    assert result.code != 0
    assert said in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2, result.stderr
