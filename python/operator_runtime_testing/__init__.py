"""Test-only helpers: assertions against torch, tolerances, random tensors, timing and
PerformanceResult, the operator records (operators/) and the trusted timing harness
(verified_timing.py). The course built on them is operator_course."""
