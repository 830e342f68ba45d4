"""The version of `yield`, in a module of its own: the user agent, `--version` and the agent server
read it without importing the package's exports."""

__version__ = "0.1.0"
