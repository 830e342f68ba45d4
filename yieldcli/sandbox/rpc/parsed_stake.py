"""`jsonParsed` of the Stake program, in a validator's shapes (agave's parse_stake, both of them): every
instruction (initialize, authorize, delegate, split, withdraw, deactivate, setLockup, merge, the
seeded and checked ones, getMinimumDelegation, deactivateDelinquent, redelegate, moveStake and
moveLamports) with the legacy and the minimal account layouts, and stake accounts (uninitialized,
initialized, delegated, rewards pool)."""

from __future__ import annotations

import struct
from typing import Any

from solders.pubkey import Pubkey

Info = dict[str, Any]
STAKE_PROGRAM = "Stake11111111111111111111111111111111111111"
STAKE_ACCOUNT_SIZE = 200
_CLOCK = "SysvarC1ock11111111111111111111111111111111"
_RENT = "SysvarRent111111111111111111111111111111111"
_CONFIG = "StakeConfig11111111111111111111111111111111"
_AUTHORITIES = ("Staker", "Withdrawer")


def _key(data: bytes, at: int) -> str:
    raw = data[at : at + 32]
    if len(raw) != 32:
        raise ValueError("short key")
    return str(Pubkey.from_bytes(raw))


def _lockup(data: bytes, at: int) -> Info:
    timestamp, epoch = struct.unpack_from("<qQ", data, at)
    return {"unixTimestamp": timestamp, "epoch": epoch, "custodian": _key(data, at + 16)}


def _typed(kind: str, info: Info) -> Info:
    return {"info": info, "type": kind}


def _after_clock(info: Info, a: list[str], at: int, names: tuple[str, ...], minimal: tuple[str, ...]) -> Info:
    """The accounts from `at`: with the clock sysvar there, the legacy layout's `names` (clock first),
    else the minimal layout's; a name is left out when its account is not given."""
    chosen = names if a[at] == _CLOCK else minimal
    info.update({name: key for name, key in zip(chosen, a[at:], strict=False)})
    return info


def instruction(a: list[str], data: bytes) -> Info | None:
    (tag,) = struct.unpack_from("<I", data)
    if tag == 0:
        authorized = {"staker": _key(data, 4), "withdrawer": _key(data, 36)}
        info: Info = {"stakeAccount": a[0], "authorized": authorized, "lockup": _lockup(data, 68)}
        if len(a) >= 2 and a[1] == _RENT:
            info["rentSysvar"] = a[1]
        return _typed("initialize", info)
    if tag == 1:
        (kind,) = struct.unpack_from("<I", data, 36)
        info = {"stakeAccount": a[0], "newAuthority": _key(data, 4), "authorityType": _AUTHORITIES[kind]}
        return _typed(
            "authorize", _after_clock(info, a, 1, ("clockSysvar", "authority", "custodian"), ("authority", "custodian"))
        )
    if tag == 2:
        info = {"stakeAccount": a[0], "voteAccount": a[1]}
        if a[2] != _CLOCK:
            return _typed("delegate", {**info, "stakeAuthority": a[2]})
        info.update({"clockSysvar": a[2], "stakeHistorySysvar": a[3]})
        if a[4] == _CONFIG:
            info["stakeConfigAccount"] = a[4]
            info.update({"stakeAuthority": a[5]} if len(a) >= 6 else {})
        else:
            info["stakeAuthority"] = a[4]
        return _typed("delegate", info)
    if tag == 3:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        info = {"stakeAccount": a[0], "newSplitAccount": a[1], "lamports": lamports}
        return _typed("split", {**info, **({"stakeAuthority": a[2]} if len(a) >= 3 else {})})
    if tag == 4:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        info = {"stakeAccount": a[0], "destination": a[1], "lamports": lamports}
        legacy = ("clockSysvar", "stakeHistorySysvar", "withdrawAuthority", "custodian")
        return _typed("withdraw", _after_clock(info, a, 2, legacy, ("withdrawAuthority", "custodian")))
    if tag == 5:
        info = _after_clock({"stakeAccount": a[0]}, a, 1, ("clockSysvar", "stakeAuthority"), ("stakeAuthority",))
        return _typed("deactivate", info)
    if tag == 7:
        info = {"destination": a[0], "source": a[1]}
        merged = ("clockSysvar", "stakeHistorySysvar", "stakeAuthority")
        return _typed("merge", _after_clock(info, a, 2, merged, ("stakeAuthority",)))
    return _more(tag, a, data)


def _string(data: bytes, at: int) -> tuple[str, int]:
    """A bincode String at `at`: (it, where the next value starts)."""
    (size,) = struct.unpack_from("<Q", data, at)
    raw = data[at + 8 : at + 8 + size]
    if len(raw) != size:
        raise ValueError("short string")
    return raw.decode("utf-8"), at + 8 + size


def _lockup_args(data: bytes, custodian: bool) -> Info:
    """LockupArgs (LockupCheckedArgs without the custodian): only the fields given, as bincode Options."""
    at, found = 4, Info()
    fields = (("unixTimestamp", "<q"), ("epoch", "<Q"), ("custodian", ""))[: 3 if custodian else 2]
    for name, layout in fields:
        tag = data[at]
        if tag > 1:
            raise ValueError("not an option tag")
        if tag == 1:
            found[name] = _key(data, at + 1) if not layout else struct.unpack_from(layout, data, at + 1)[0]
        at += 1 + (32 if not layout else 8) * tag
    return found


def _need(a: list[str], count: int) -> None:
    if len(a) < count:
        raise IndexError(f"{count} accounts expected")


def _more(tag: int, a: list[str], data: bytes) -> Info | None:
    """setLockup and the instructions after merge (agave's parse_stake names them so)."""
    if tag in (6, 12):
        _need(a, 2)
        lockup = _lockup_args(data, custodian=tag == 6)
        if tag == 12 and len(a) >= 3:
            lockup["custodian"] = a[2]
        info = {"stakeAccount": a[0], "custodian": a[1], "lockup": lockup}
        return _typed("setLockup" if tag == 6 else "setLockupChecked", info)
    if tag in (8, 11):
        return _with_seed(tag, a, data)
    if tag == 9:
        _need(a, 4 if len(a) > 1 and a[1] == _RENT else 3)
        names = ("rentSysvar", "staker", "withdrawer") if a[1] == _RENT else ("staker", "withdrawer")
        return _typed("initializeChecked", {"stakeAccount": a[0], **dict(zip(names, a[1:], strict=False))})
    if tag == 10:
        (kind,) = struct.unpack_from("<I", data, 4)
        info = {"stakeAccount": a[0], "authorityType": _AUTHORITIES[kind]}
        names = ("authority", "newAuthority", "custodian")
        _need(a, 4 if len(a) > 1 and a[1] == _CLOCK else 3)
        return _typed("authorizeChecked", _after_clock(info, a, 1, ("clockSysvar", *names), names))
    if tag == 13:
        return {"type": "getMinimumDelegation"}  # no info: a validator leaves a null info out
    if tag == 14:
        _need(a, 3)
        return _typed("deactivateDelinquent", {"stakeAccount": a[0], "voteAccount": a[1], "referenceVoteAccount": a[2]})
    if tag == 15:
        order = ("stakeAccount", "newStakeAccount", "voteAccount", "stakeConfigAccount", "stakeAuthority")
        _need(a, 5)
        return _typed("redelegate", dict(zip(order, a, strict=False)))
    if tag in (16, 17):
        _need(a, 3)
        (lamports,) = struct.unpack_from("<Q", data, 4)
        info = {"source": a[0], "destination": a[1], "stakeAuthority": a[2], "lamports": lamports}
        return _typed("moveStake" if tag == 16 else "moveLamports", info)
    return None


def _with_seed(tag: int, a: list[str], data: bytes) -> Info:
    """authorizeWithSeed (8) and authorizeCheckedWithSeed (11)."""
    at = 4
    new_authorized = None
    if tag == 8:
        new_authorized, at = _key(data, 4), 36
    (kind,) = struct.unpack_from("<I", data, at)
    seed, at = _string(data, at + 4)
    info: Info = {"stakeAccount": a[0], "authorityBase": a[1]}
    if new_authorized is not None:
        info["newAuthorized"] = new_authorized
    info.update({"authorityType": _AUTHORITIES[kind], "authoritySeed": seed, "authorityOwner": _key(data, at)})
    _need(a, 2 if tag == 8 else 3)
    if tag == 8:
        sysvar_first = ("clockSysvar", "custodian")
        return _typed(
            "authorizeWithSeed", _after_clock(info, a, 2, sysvar_first, ("custodian",)) if len(a) > 2 else info
        )
    _need(a, 4 if a[2] == _CLOCK else 3)
    names = ("newAuthorized", "custodian")
    return _typed("authorizeCheckedWithSeed", _after_clock(info, a, 2, ("clockSysvar", *names), names))


def account(data: bytes) -> Info | None:
    """A stake account's state as jsonParsed gives it; None if it is not one."""
    if len(data) < 4:
        return None
    (state,) = struct.unpack_from("<I", data)
    if state == 0:
        return {"type": "uninitialized"}
    if state == 3:
        return {"type": "rewardsPool"}
    if state not in (1, 2) or len(data) < 196:
        return None
    meta = {
        "rentExemptReserve": str(struct.unpack_from("<Q", data, 4)[0]),
        "authorized": {"staker": _key(data, 12), "withdrawer": _key(data, 44)},
        "lockup": _lockup(data, 76),
    }
    if state == 1:
        return _typed("initialized", {"meta": meta, "stake": None})
    amount, activation, deactivation = struct.unpack_from("<QQQ", data, 156)
    (credits,) = struct.unpack_from("<Q", data, 188)
    delegation = {
        "voter": _key(data, 124),
        "stake": str(amount),
        "activationEpoch": str(activation),
        "deactivationEpoch": str(deactivation),
    }
    return _typed("delegated", {"meta": meta, "stake": {"delegation": delegation, "creditsObserved": credits}})
