"""acp-codegen: typed, stdlib-only Python bindings for the Agent Client Protocol."""

__version__ = "0.1.0"
