"""Hosting the course on one machine: a JupyterHub for a class, and the instructor's commands.

    python -m operator_course.hosting serve   --config course.toml   # the hub (root)
    python -m operator_course.hosting collect --config course.toml   # homes -> submissions/
    python -m operator_course.hosting grade   --config course.toml   # grader + late rule
    python -m operator_course.hosting return  --config course.toml   # feedback -> homes

config.py reads course.toml; accounts.py makes the students' Unix users; hub_config.py is the
JupyterHub config (spawner.py: limits, the handout, kernels over IPC; with_hub.py: services
that die with the hub); collect.py, late.py, give_back.py are the instructor's steps after the hub."""
