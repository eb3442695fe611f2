"""IR + names → files: the lowering to template contexts, the Jinja environment, ruff."""
