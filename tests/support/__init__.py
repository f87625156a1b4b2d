"""Helpers shared across the tests' folders and the benchmarks: a real ``tsumugi dev`` process, the clock."""
