"""Benchmarks of acp-codegen; run `python benchmarks/run.py`."""
