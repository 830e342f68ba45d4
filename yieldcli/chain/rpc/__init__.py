"""The RPC adapter and what it speaks: batches, errors, answer types, the cluster's identity."""
