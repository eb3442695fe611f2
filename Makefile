# acp-codegen: `make setup` once, then `make test`. `make help` lists every target.
PY ?= .venv/bin/python

.PHONY: help setup venv sync generate check test lint typecheck bench interop adversarial clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

setup: venv sync generate ## create .venv, sync the pinned schemas, generate the bindings
	npm ci --prefix interop --no-audit --no-fund --loglevel=error

venv: ## create .venv with the generator and the dev tools
	python3 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'

sync: ## fetch the pinned schemas into schema/cache (sha256-checked)
	$(PY) -m codegen schema sync

generate: ## regenerate generated/ from the pinned default schemas
	$(PY) -m codegen generate

check: ## fail if generated/ is not what the generator makes today
	$(PY) -m codegen generate --check

test: lint typecheck ## lint, type-check, then the whole test suite
	$(PY) -m pytest

lint: ## ruff over the generator, tests and generated code
	$(PY) -m ruff check codegen templates/runtime templates/toolkit tests benchmarks examples generated
	$(PY) -m ruff format --check codegen templates/runtime templates/toolkit tests benchmarks examples

typecheck: ## mypy --strict over the generator and the generated packages
	$(PY) -m mypy --strict codegen generated/acp_v1 generated/acp_v2
	$(PY) -m mypy --strict templates/runtime templates/toolkit
	MYPYPATH=generated $(PY) -m mypy --strict examples

bench: ## speed ratios, measured side by side (see benchmarks/README.md)
	$(PY) benchmarks/run.py

adversarial: ## the heavy hostile-peer cases too (64 MiB lines, 100,000 requests, 200,000 updates)
	$(PY) -m pytest tests/e2e/test_hostile_peers.py -m ''

interop: ## our client and agent against the official TypeScript SDK
	$(PY) -m pytest tests -k interop

clean: ## remove caches (not the venv)
	rm -rf schema/cache .pytest_cache .mypy_cache .ruff_cache .hypothesis
