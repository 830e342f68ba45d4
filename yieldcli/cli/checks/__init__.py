"""The checks of a setup, shared by `yield doctor`, `yield init` and `yield auth status --check`."""
