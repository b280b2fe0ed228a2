"""The sandboxed grader and the instructor's release: see operator_course/__init__.py."""
