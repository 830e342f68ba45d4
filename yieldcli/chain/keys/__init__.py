"""Who signs: keypairs, the `Signer` protocol, signing a transaction's own slots, the Ledger."""
