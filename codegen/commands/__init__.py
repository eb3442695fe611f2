"""The CLI commands, each a thin layer over the library."""
