"""Operator commands (not deployed to Lambda)."""
