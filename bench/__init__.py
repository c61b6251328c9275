"""Benchmarks (`make bench`): run against the local stack, never part of `make test`."""
