"""The terminal's side of a write, shared by the write commands (`deposit`, `withdraw`, ..., `tx`):
the transaction flags (`flow.TxOptions`) and the run through `Client.transact` with the hooks a
terminal adds (`flow`), the review and outcome drawn (`report`), SIGTERM and Ctrl-C around a send
(`signals`)."""
