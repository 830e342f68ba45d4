"""The sandbox manual's lists of the node's methods and subscriptions are the ones the node answers: a
method added or dropped without the manual (or the other way round) fails here."""

from __future__ import annotations

import re
from pathlib import Path

from yieldcli.sandbox.rpc.pubsub import UNSUBSCRIBE

MANUAL = Path(__file__).resolve().parents[3] / "docs" / "manual" / "sandbox.md"


def _named(start: str, end: str) -> set[str]:
    """The names in backquotes of the manual's paragraph from `start` to `end`, less those in parentheses
    (a method's options)."""
    text = MANUAL.read_text(encoding="utf-8")
    at = text.index(start)
    paragraph = re.sub(r"\([^)]*\)", "", text[at : text.index(end, at)])
    return set(re.findall(r"`([a-zA-Z_]+)`", paragraph))


def test_the_manual_lists_every_method_the_node_answers_and_no_other(still):
    _, server = still
    assert _named("\nMethods: ", "Batches are answered") == set(server._methods)


def test_the_manual_lists_every_subscription_the_node_serves_and_no_other():
    listed = {n for n in _named("\nSubscriptions (PubSub): ", "\nKnown differences") if n.endswith("Subscribe")}
    assert listed == {name.replace("Unsubscribe", "Subscribe") for name in UNSUBSCRIBE}
