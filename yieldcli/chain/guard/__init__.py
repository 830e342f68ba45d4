"""The guard: nothing is signed unless the transaction's whole effect is exactly what the user asked.

Read in this order: `kinds/` (each kind of action: its needs, its expected effect, its own
checks), `compare.py` (the verdict), `calls.py` (the strategy program's instructions matched to
the request, through `strategies/`),
`instructions.py` (what may use the user's authority), `effect.py` (the exact effect over `holdings.py`),
`signers.py` (fee payer and co-signers), `read.py` (reading the chain around the simulation).
Nothing here imports the layers above it (sending, the client, the faces).
"""
