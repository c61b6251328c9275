"""Leaked-key reports: GitHub's secret scanning partner program.

github.py (the published key list, fetched with fetch.py's SSRF-safe fetcher; the
report's signature and its parsing), service.py (revoking what a report names).
"""
