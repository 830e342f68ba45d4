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


def _parsed_types() -> set[str]:
    """Every instruction `type` jsonParsed gives for Token-2022's extension instructions (26 and up), the
    token metadata and group interfaces and the Stake program: each instruction tried with zeroed
    data of every length up to 80 bytes and ten accounts."""
    import hashlib
    import struct

    from solders.keypair import Keypair

    from yieldcli.sandbox.rpc.parsed import instruction
    from yieldcli.sandbox.rpc.parsed_stake import STAKE_PROGRAM
    from yieldcli.solana import programs

    accounts = [str(Keypair().pubkey()) for _ in range(10)]
    names = [
        f"spl_token_group_interface:{n}"
        for n in ("initialize_token_group", "update_group_max_size", "update_authority", "initialize_member")
    ] + [
        f"spl_token_metadata_interface:{n}"
        for n in ("initialize_account", "updating_field", "remove_key_ix", "update_the_authority", "emitter")
    ]
    samples = [(programs.TOKEN_2022_PROGRAM, bytes([tag, sub])) for tag in range(26, 46) for sub in range(16)]
    samples += [(programs.TOKEN_2022_PROGRAM, hashlib.sha256(n.encode()).digest()[:8]) for n in names]
    samples += [(STAKE_PROGRAM, struct.pack("<I", tag)) for tag in range(20)]
    found = set()
    for program, head in samples:
        for size in range(81):
            parsed = instruction(program, accounts, head + bytes(size), 1).get("parsed")
            if isinstance(parsed, dict):
                found.add(parsed["type"])
    return found


def test_the_manual_names_every_extension_interface_and_stake_instruction_parsed():
    parsed = _parsed_types()
    assert {"confidentialTransfer", "initializeTokenMetadata", "moveLamports", "pause"} <= parsed
    text = MANUAL.read_text(encoding="utf-8")
    at = text.index("\nEncodings: ")
    named = set(re.findall(r"`([a-zA-Z]+)`", text[at : text.index("\nSubscriptions (PubSub): ", at)]))
    assert parsed - named == set()
