"""The one pipeline every transaction takes: `engine.prepare` (obtain, budget, review, simulate, guard)
and `engine.complete` (confirm, sign, journal, send once, wait), with its types, checks, broadcast,
confirmation, settling and outcomes."""
