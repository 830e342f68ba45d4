"""What a one-node cluster says about itself: its node, its vote account, epochs, inflation, supply.

The sandbox is one validator that never forks. Where a validator would speak of its peers, stake or
leaders, this answers as `solana-test-validator` does: one node, which is every slot's leader and
holds all the stake, with the default genesis's epoch schedule and inflation.
"""

from __future__ import annotations

import hashlib
from typing import Any

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from yieldcli.sandbox.chain.history import History
from yieldcli.sandbox.rpc.params import Answering, Invalid, options, param, pubkey

SLOTS_PER_EPOCH = 432_000
ACTIVATED_STAKE = 500_000_000_000_000  # what solana-test-validator's genesis delegates to its node
LARGEST = 20
MAX_SLOT_LEADERS = 5_000
# Inflation of the default genesis (solana_inflation::Inflation::default()): protocol rates, not money.
INFLATION = {"initial": 0.08, "terminal": 0.015, "taper": 0.15, "foundation": 0.05, "foundationTerm": 7.0}
# The stake program's minimum delegation while raise_minimum_delegation_to_1_sol is off (mainnet today).
STAKE_MINIMUM_DELEGATION = 1


def _node_keypairs(genesis: str) -> tuple[Keypair, Keypair]:
    identity = Keypair.from_seed(hashlib.sha256(b"yield sandbox node identity" + genesis.encode()).digest())
    vote = Keypair.from_seed(hashlib.sha256(b"yield sandbox node vote" + genesis.encode()).digest())
    return identity, vote


def node_keys(genesis: str) -> tuple[Pubkey, Pubkey]:
    """(identity, vote account) of the sandbox's node: its own per chain, the same in every process."""
    identity, vote = _node_keypairs(genesis)
    return identity.pubkey(), vote.pubkey()


def node_vote(history: History, slot: int) -> dict[str, Any]:
    """The node's vote on block `slot`, as voteSubscribe tells it: signed by the node's identity over
    the slot and the block's hash (the one node's votes are not transactions on this chain)."""
    identity, vote = _node_keypairs(history.genesis)
    blockhash = history.blockhash(slot)
    signature = identity.sign_message(b"yield sandbox vote" + slot.to_bytes(8, "little") + blockhash.encode())
    return {
        "votePubkey": str(vote.pubkey()),
        "slots": [slot],
        "hash": blockhash,
        "timestamp": history.block_time(slot),
        "signature": str(signature),
    }


class ClusterMethods(Answering):
    version: tuple[str, int]  # (solana-core, feature-set) the server reports
    address: tuple[str, int]  # where the RPC listens; PubSub is on the next port

    def _identity(self) -> str:
        return str(node_keys(self.runtime.genesis_hash)[0])

    def _get_identity(self, params: list[Any]) -> dict[str, str]:
        return {"identity": self._identity()}

    def _get_cluster_nodes(self, params: list[Any]) -> list[dict[str, Any]]:
        host, port = self.address
        core, features = self.version
        return [
            {
                "pubkey": self._identity(),
                "gossip": None,
                "tvu": None,
                "tpu": None,
                "tpuQuic": None,
                "tpuForwards": None,
                "tpuForwardsQuic": None,
                "tpuVote": None,
                "serveRepair": None,
                "rpc": f"{host}:{port}",
                "pubsub": f"{host}:{port + 1}",
                "version": core,
                "featureSet": features,
                "shredVersion": 0,
            }
        ]

    def _get_vote_accounts(self, params: list[Any]) -> dict[str, Any]:
        identity, vote = node_keys(self.runtime.genesis_hash)
        config = options(params, 0)
        slot = self.runtime.slot
        epoch = slot // SLOTS_PER_EPOCH
        mine = {
            "votePubkey": str(vote),
            "nodePubkey": str(identity),
            "activatedStake": ACTIVATED_STAKE,
            "epochVoteAccount": True,
            "commission": 0,
            "lastVote": slot,
            "epochCredits": [[epoch, slot % SLOTS_PER_EPOCH, 0]],
            "rootSlot": slot,
        }
        wanted = config.get("votePubkey")
        return {"current": [mine] if wanted in (None, str(vote)) else [], "delinquent": []}

    def _get_epoch_schedule(self, params: list[Any]) -> dict[str, Any]:
        return {
            "slotsPerEpoch": SLOTS_PER_EPOCH,
            "leaderScheduleSlotOffset": SLOTS_PER_EPOCH,
            "warmup": False,
            "firstNormalEpoch": 0,
            "firstNormalSlot": 0,
        }

    def _get_leader_schedule(self, params: list[Any]) -> dict[str, list[int]] | None:
        first = param(params, 0, None)
        config = first if isinstance(first, dict) else options(params, 1)
        slot = first if type(first) is int else self.runtime.slot
        if slot // SLOTS_PER_EPOCH > self.runtime.slot // SLOTS_PER_EPOCH + 1:
            return None  # not known yet, as for an epoch a validator has no schedule for
        identity = self._identity()
        if config.get("identity") not in (None, identity):
            return {}
        return {identity: list(range(SLOTS_PER_EPOCH))}

    def _get_slot_leader(self, params: list[Any]) -> str:
        return self._identity()

    def _get_slot_leaders(self, params: list[Any]) -> list[str]:
        param(params, 0)
        limit = param(params, 1)
        if type(limit) is not int or not 1 <= limit <= MAX_SLOT_LEADERS:
            raise Invalid(f"Invalid limit; max {MAX_SLOT_LEADERS}")
        return [self._identity()] * limit

    def _get_block_production(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 0)
        slot = self.runtime.slot
        given = config.get("range") or {}
        first = int(given.get("firstSlot", slot - slot % SLOTS_PER_EPOCH))
        last = int(given.get("lastSlot", slot))
        if last < first:
            raise Invalid("Invalid params: lastSlot must be at least firstSlot")
        produced = max(0, min(last, slot) - first + 1)
        mine = config.get("identity") in (None, self._identity())
        by_identity = {self._identity(): [produced, produced]} if mine else {}
        return self._context({"byIdentity": by_identity, "range": {"firstSlot": first, "lastSlot": last}})

    def _get_inflation_governor(self, params: list[Any]) -> dict[str, float]:
        return dict(INFLATION)

    def _get_inflation_rate(self, params: list[Any]) -> dict[str, Any]:
        # Epoch 0 of the default genesis: the initial rate, a share of it to the foundation.
        total, foundation = INFLATION["initial"], INFLATION["initial"] * INFLATION["foundation"]
        return {
            "total": total,
            "validator": total - foundation,
            "foundation": foundation,
            "epoch": self.runtime.slot // SLOTS_PER_EPOCH,
        }

    def _get_inflation_reward(self, params: list[Any]) -> list[None]:
        addresses = param(params, 0)
        if not isinstance(addresses, list):
            raise Invalid("Invalid params: expected an array of addresses")
        for address in addresses:
            pubkey(address)
        return [None] * len(addresses)  # no rewards are paid here

    def _get_stake_minimum_delegation(self, params: list[Any]) -> dict[str, Any]:
        return self._context(STAKE_MINIMUM_DELEGATION)

    def _get_supply(self, params: list[Any]) -> dict[str, Any]:
        options(params, 0)
        total = sum(account.lamports for _, account in self.runtime.accounts())
        # Nothing here is set aside from circulation, so the list is empty whether asked for or not.
        value = {"total": total, "circulating": total, "nonCirculating": 0, "nonCirculatingAccounts": []}
        return self._context(value)

    def _get_largest_accounts(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 0)
        kind = config.get("filter")
        if kind not in (None, "circulating", "nonCirculating"):
            raise Invalid(f"Invalid params: unknown variant `{kind}`, expected `circulating` or `nonCirculating`")
        if kind == "nonCirculating":
            return self._context([])  # nothing here is set aside from circulation
        ranked = sorted(self.runtime.accounts(), key=lambda found: found[1].lamports, reverse=True)[:LARGEST]
        return self._context([{"address": str(k), "lamports": a.lamports} for k, a in ranked])
