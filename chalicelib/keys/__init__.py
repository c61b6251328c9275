"""API keys: the record and its lifetimes, the plaintext format, the store, the plaintexts at
rest, and the lifecycle from creation to expiry.
"""
