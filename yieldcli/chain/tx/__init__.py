"""Transactions and instructions: decoding, the review, durable nonces, the service's transactions."""
