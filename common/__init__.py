"""Dependency-free pieces every package imports: the user-error base and the study's constants.

Nothing here imports `harness`, `envs`, `conditions`, `results` or any third-party package, so
each of them may import it without breaking the one direction of imports.
"""
