"""Benchmark entries, one module per operator: torch's peer and the FLOP count."""
