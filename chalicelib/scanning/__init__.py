"""Leaked-key reports: GitHub's secret scanning partner program.

public_fetch.py (an SSRF-safe GET for the published signing keys), github.py (the key list,
the report's signature and its parsing), service.py (revoking what a report names).
"""
