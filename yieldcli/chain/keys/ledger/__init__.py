"""Signing with a Ledger running the Solana app: keypair URLs, the app's APDU protocol, two transports.

- `urls`: `usb://ledger[/<WALLET_ID>][?key=N[/M]]` as the Solana CLI reads them, and derivation paths.
- `protocol`: the app's commands (configuration, public key, sign a message), chunking, status words.
- `transports`: USB HID for real devices (hidapi, imported only when used), the TCP APDU port of the
  Speculos emulator (`YIELD_LEDGER_APDU=host:port`).
- `signer`: `LedgerSigner`, usable wherever a solders Keypair is (`pubkey()`, `sign_message(bytes)`).
"""
