"""The sandbox chain's parts: the folder lock, the clock, saved state, transaction records and knobs."""
