"""Benchmarks: `make bench` (see bench/RESULTS.md). Run from the repository root."""
