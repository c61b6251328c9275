"""Leaked-key reports from GitHub's secret scanning partner program: the report's signature
checked against GitHub's published keys, then the active keys it names revoked.
"""
