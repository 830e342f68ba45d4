"""`jsonParsed` of the token group and token metadata interface instructions that Token-2022 serves
for its own mints, in a validator's shapes (agave's parse_token/extension/token_group.rs and
token_metadata.rs). Each is known by an 8-byte discriminator (the first bytes of the SHA-256 of its
name); the group's data are fixed-size, the metadata's Borsh, and a payload that does not decode
exactly stays raw (None), as a validator leaves it."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable

from yieldcli.sandbox.rpc.parsed_token_ext import Info, nonzero

Found = tuple[str, Info] | None
_FIELDS = ("name", "symbol", "uri")


def _discriminator(name: str) -> bytes:
    return hashlib.sha256(name.encode("ascii")).digest()[:8]


class _Borsh:
    """Reads Borsh values from the payload, which must be used up exactly."""

    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, size: int) -> bytes:
        raw = self.data[self.at : self.at + size]
        if len(raw) != size:
            raise ValueError("short Borsh value")
        self.at += size
        return raw

    def string(self) -> str:
        (size,) = struct.unpack("<I", self.take(4))
        return self.take(size).decode("utf-8")

    def flag(self) -> int:
        value = self.take(1)[0]
        if value > 1:
            raise ValueError("not a Borsh bool or option tag")
        return value

    def optional_u64(self) -> int | None:
        return int(struct.unpack("<Q", self.take(8))[0]) if self.flag() else None

    def done(self) -> None:
        if self.at != len(self.data):
            raise ValueError("Not all bytes read")


def _need(a: list[str], count: int) -> None:
    if len(a) < count:
        raise IndexError(f"{count} accounts expected")


def _initialize_group(a: list[str], d: bytes) -> Found:
    if len(d) != 40:
        return None
    _need(a, 3)
    (size,) = struct.unpack_from("<Q", d, 32)
    info = {"group": a[0], "maxSize": size, "mint": a[1], "mintAuthority": a[2], "updateAuthority": nonzero(d, 0)}
    return "initializeTokenGroup", info


def _group_max_size(a: list[str], d: bytes) -> Found:
    if len(d) != 8:
        return None
    _need(a, 2)
    return "updateTokenGroupMaxSize", {"group": a[0], "maxSize": struct.unpack("<Q", d)[0], "updateAuthority": a[1]}


def _group_authority(a: list[str], d: bytes) -> Found:
    if len(d) != 32:
        return None
    _need(a, 2)
    return "updateTokenGroupAuthority", {"group": a[0], "updateAuthority": a[1], "newAuthority": nonzero(d, 0)}


def _initialize_member(a: list[str], d: bytes) -> Found:
    if d:
        return None
    _need(a, 5)
    info = {
        "member": a[0],
        "memberMint": a[1],
        "memberMintAuthority": a[2],
        "group": a[3],
        "groupUpdateAuthority": a[4],
    }
    return "initializeTokenGroupMember", info


def _initialize_metadata(a: list[str], d: bytes) -> Found:
    read = _Borsh(d)
    name, symbol, uri = read.string(), read.string(), read.string()
    read.done()
    _need(a, 4)
    info = {"metadata": a[0], "updateAuthority": a[1], "mint": a[2], "mintAuthority": a[3]}
    return "initializeTokenMetadata", {**info, "name": name, "symbol": symbol, "uri": uri}


def _update_field(a: list[str], d: bytes) -> Found:
    read = _Borsh(d)
    kind = read.take(1)[0]
    if kind > 3:
        raise ValueError("unknown metadata field")
    field = _FIELDS[kind] if kind < 3 else read.string()
    value = read.string()
    read.done()
    _need(a, 2)
    return "updateTokenMetadataField", {"metadata": a[0], "updateAuthority": a[1], "field": field, "value": value}


def _remove_key(a: list[str], d: bytes) -> Found:
    read = _Borsh(d)
    idempotent = bool(read.flag())
    key = read.string()
    read.done()
    _need(a, 2)
    return "removeTokenMetadataKey", {"metadata": a[0], "updateAuthority": a[1], "key": key, "idempotent": idempotent}


def _metadata_authority(a: list[str], d: bytes) -> Found:
    if len(d) != 32:
        return None
    _need(a, 2)
    info = {"metadata": a[0], "updateAuthority": a[1], "newAuthority": nonzero(d, 0)}
    return "updateTokenMetadataAuthority", info


def _emit(a: list[str], d: bytes) -> Found:
    read = _Borsh(d)
    start, end = read.optional_u64(), read.optional_u64()
    read.done()
    _need(a, 1)
    info: Info = {"metadata": a[0]}
    info.update({k: v for k, v in (("start", start), ("end", end)) if v is not None})
    return "emitTokenMetadata", info


_BY_DISCRIMINATOR: dict[bytes, Callable[[list[str], bytes], Found]] = {
    _discriminator("spl_token_group_interface:initialize_token_group"): _initialize_group,
    _discriminator("spl_token_group_interface:update_group_max_size"): _group_max_size,
    _discriminator("spl_token_group_interface:update_authority"): _group_authority,
    _discriminator("spl_token_group_interface:initialize_member"): _initialize_member,
    _discriminator("spl_token_metadata_interface:initialize_account"): _initialize_metadata,
    _discriminator("spl_token_metadata_interface:updating_field"): _update_field,
    _discriminator("spl_token_metadata_interface:remove_key_ix"): _remove_key,
    _discriminator("spl_token_metadata_interface:update_the_authority"): _metadata_authority,
    _discriminator("spl_token_metadata_interface:emitter"): _emit,
}


def instruction(accounts: list[str], data: bytes) -> Found:
    """A token group or token metadata instruction as (type, info); None when it is none of them or
    does not decode (a validator leaves it raw)."""
    parser = _BY_DISCRIMINATOR.get(data[:8])
    return None if parser is None else parser(accounts, data[8:])
