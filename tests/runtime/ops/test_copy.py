"""copy: correctness against torch, out=, prepared execution and bad input (tests/cases/copy.py)."""

from op_suite import define_tests

test_matches_torch, test_out_variant, test_prepared, test_bad_input = define_tests("copy")
