"""API keys.

The record and its lifetimes, the plaintext format, the store, the vault (plaintexts at
rest) and the lifecycle service.
"""
