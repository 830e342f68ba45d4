"""The Solana side of `yield`, one concern per package; the arrows run one way, left to right:

    rpc/  <-  tx/  <-  fees/  <-  guard/  <-  transact/
                                   keys/  <-  transact/

- `rpc/`: the RPC adapter (`adapter.Rpc`), batches, errors, answer types, the cluster's identity;
- `tx/`: transactions and instructions: decode, review, durable nonces, the service's transactions;
- `fees/`: the compute budget and priority fees;
- `guard/`: what is proven before anything is signed (the whole effect, the signers);
- `keys/`: keypairs, the `Signer` protocol, signing, the Ledger;
- `transact/`: the pipeline that drives them: prepare, complete, send once, confirm, journal, outcomes.

Importable without the command line. solana-py is loaded only inside the functions that talk to a chain.
"""
