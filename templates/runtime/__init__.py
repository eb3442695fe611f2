"""The hand-written runtime modules copied into every generated package (with the banner).

This file only makes the folder a package, so that ruff and mypy check the modules' relative
imports as source; the generator does not copy it."""
