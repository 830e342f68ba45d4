"""A transaction's error, as the RPC reports it in JSON, said in one short line."""

from __future__ import annotations

from typing import Any


def describe_error(err: Any) -> str:
    """A transaction error in the RPC's JSON form, as one short line."""
    if err is None:
        return "no error"
    if isinstance(err, str):
        return err
    if isinstance(err, dict) and "InstructionError" in err:
        index, inner = err["InstructionError"]
        if isinstance(inner, dict) and "Custom" in inner:
            inner = f"custom program error 0x{inner['Custom']:x} ({inner['Custom']})"
        elif isinstance(inner, dict):
            inner = ", ".join(f"{k} {v}" for k, v in inner.items())
        return f"instruction {index} failed: {inner}"
    if isinstance(err, dict) and len(err) == 1:
        ((name, value),) = err.items()
        return f"{name} {value}"
    return str(err)
