"""What the guard knows of a strategy program's own layout: one small module per program.

A layout decodes the program's instructions (`Call`) and its position accounts (`PositionView`), derives
the addresses a request implies, and says how a position changes for each action (the program's rule,
fee included). A program whose layout is not known has none: the guard then applies the rules that need
no layout and says what it could not prove. Adding a program is one module here and one line in `LAYOUTS`.
"""

from __future__ import annotations

from yieldcli.chain.guard.strategies.layout import Call, Layout, PositionView
from yieldcli.chain.guard.strategies.sandbox import LAYOUT as SANDBOX
from yieldcli.solana.programs import SANDBOX_STRATEGY_PROGRAM

__all__ = ["LAYOUTS", "Call", "Layout", "PositionView", "layout_for"]

LAYOUTS: dict[str, Layout] = {SANDBOX_STRATEGY_PROGRAM: SANDBOX}


def layout_for(program: str | None) -> Layout | None:
    return LAYOUTS.get(program) if program else None
