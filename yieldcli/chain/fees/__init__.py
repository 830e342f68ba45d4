"""Fees: the compute budget a transaction asks for and the priority fee it pays."""
