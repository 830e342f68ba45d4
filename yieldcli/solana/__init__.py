"""Solana facts shared by the client's `chain/` and the `sandbox/`: program ids and instruction
builders, token and mint account layouts, cluster monikers and commitments, transaction errors.
Nothing here talks to a network or knows the command line."""
