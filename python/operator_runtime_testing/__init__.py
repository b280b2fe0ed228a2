"""Test-only helpers: assertions against torch, timing, PerformanceResult."""
