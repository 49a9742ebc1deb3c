# Stepwise: `make chat` to talk to it locally, `make test` to run every check.
# Both create their own virtual environments; nothing needs installing by hand besides Python 3.13.

# Python 3.13, the Lambda runtime (sam build without Docker needs the same version): `python3.13` on PATH if it
# runs (a pyenv shim for a version that is installed but not selected does not), else pyenv's own 3.13.
ifndef PYTHON
PYTHON := $(shell for candidate in python3.13 $$(pyenv root 2>/dev/null)/versions/3.13*/bin/python3.13; do \
	"$$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null \
	&& { "$$candidate" -c 'import sys; print(sys.executable)'; break; }; done)
endif
NO_PYTHON := Python 3.13 is needed and was not found: install it (python.org, your system package python3.13, or pyenv install 3.13), or name it: make PYTHON=/path/to/python3.13 ...
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
# The markers name the Python version: a virtual environment made with another version is made again.
INSTALLED := $(VENV)/.installed-py313
SAM_INSTALLED := $(SAM_VENV)/.installed-py313
STACK ?= stepwise

export PYTHONPATH := layers/core:.
# Python keeps the bytecode it compiles (pip installs none: --no-compile below). A machine that sets
# PYTHONDONTWRITEBYTECODE would have each of the tests' hundred processes compile every module it imports
# again: 2x the CPU of a chat's start.
unexport PYTHONDONTWRITEBYTECODE
export SAM_CLI_TELEMETRY := 0
# sam build (without Docker) needs a python3.13 on PATH: the project's venv has one.
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help chat test lint format typecheck pytest unit behaviour integration contract bench build deploy webhook clean
.DEFAULT_GOAL := help

## This list: each target and what it does.
help:
	@awk '/^## /{d=substr($$0,4);next} /^[a-z][a-z-]*:/{if(d!=""){split($$0,t,":");printf "  make %-12s %s\n",t[1],d};d="";next} !/^#/{d=""}' $(MAKEFILE_LIST)

# The first run installs quietly for a minute or more: one line says what is happening before each step. pip
# compiles nothing ahead (--no-compile: half the install's time); Python compiles what is imported, once.
$(INSTALLED): requirements-dev.txt layers/core/requirements.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null || { echo "$(NO_PYTHON)" >&2; exit 2; }
	@echo "Creating $(VENV) with $(PYTHON) and installing the development requirements (first run only, about a minute)…"
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -r requirements-dev.txt
	touch $@

$(SAM_INSTALLED): requirements-sam.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null || { echo "$(NO_PYTHON)" >&2; exit 2; }
	@echo "Creating $(SAM_VENV) and installing the AWS SAM CLI for the contract tests (first run only, about a minute)…"
	rm -rf $(SAM_VENV)
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet --no-compile -r requirements-sam.txt
	touch $@

## The assistant, fully local (offline model unless ANTHROPIC_API_KEY is set).
chat: $(INSTALLED)
	@$(BIN)/python -m stepwise_local.chat

## Every check: lint, format, types, unit, behaviour, integration and contract tests.
test:
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null || { echo "$(NO_PYTHON)" >&2; exit 2; }
	@$(MAKE) --no-print-directory -j2 $(INSTALLED) $(SAM_INSTALLED)  # both environments at once
	@$(MAKE) --no-print-directory -j2 lint typecheck pytest  # mypy beside pytest's start; any failure fails

## Lint and check formatting (ruff).
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## Format the code and apply ruff's safe fixes.
format: $(INSTALLED)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Type-check the core package (mypy, strict).
typecheck: $(INSTALLED)
	$(BIN)/mypy layers/core/stepwise

## All the tests (unit, behaviour, integration, contract), without the linters.
pytest: $(INSTALLED) $(SAM_INSTALLED)
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || [ -n "$$STEPWISE_CHROMIUM" ] || \
		echo "make test: no Chromium found (apt-get install chromium): the Mini App's browser tests are SKIPPED"
	SAM_CLI=$(CURDIR)/$(SAM) $(BIN)/pytest -n 2

## Unit tests only (no network, no moto).
unit: $(INSTALLED)
	$(BIN)/pytest tests/unit

## Behaviour tests only (whole turns on the in-memory stack: the turn's loop in code, no moto).
behaviour: $(INSTALLED)
	$(BIN)/pytest tests/behaviour

## Integration tests only (the real state machine on the local emulation).
integration: $(INSTALLED)
	$(BIN)/pytest tests/integration

## Contract tests only (cfn-lint, sam validate, the README and docs/, the sample events).
contract: $(INSTALLED) $(SAM_INSTALLED)
	SAM_CLI=$(CURDIR)/$(SAM) $(BIN)/pytest tests/contract

## Figures: cold starts (a build for this machine), AWS cost and CPU per kind of turn, latency, a burst, caching.
bench: $(INSTALLED) $(SAM_INSTALLED)
	$(SAM) build --build-dir $(BENCH_BUILD_DIR) --cache-dir .aws-sam/cache-bench --parameter-overrides Architecture=$(HOST_ARCH)
	$(BIN)/python scripts/trim_botocore.py $(BENCH_BUILD_DIR)
	$(BIN)/python -m compileall -q -j 0 --invalidation-mode unchecked-hash $(BENCH_BUILD_DIR)
	BUILD_DIR=$(BENCH_BUILD_DIR) $(BIN)/python benchmarks/cold_start.py
	BUILD_DIR=$(BENCH_BUILD_DIR) $(BIN)/python benchmarks/cold_instructions.py
	BUILD_DIR=$(BENCH_BUILD_DIR) $(BIN)/python benchmarks/cold_path.py
	$(BIN)/python benchmarks/turn_cost.py
	$(BIN)/python benchmarks/local_turns.py
	$(BIN)/python benchmarks/burst.py
	$(BIN)/python benchmarks/caching.py

# Deployment (see docs/deploy.md): build, deploy, then point Telegram at the webhook.
# sam build installs no bytecode, and Lambda's code directory is read-only: without .pyc files every cold
# start compiles everything again (about 1 s per function, see make bench). So the build is compiled here,
# with hash-based .pyc files that stay valid whatever timestamps the deployment zip keeps. Before that, the
# layer keeps only the AWS service models the code uses (scripts/trim_botocore.py: faster first clients).
BUILD_DIR ?= .aws-sam/build
# The deployed functions run on arm64 (the template's Architecture); `make bench` imports the build here, so it
# builds for this machine's processor instead.
BENCH_BUILD_DIR := .aws-sam/bench
HOST_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86_64)
## Build the functions and the layer for AWS (sam build, no Docker), compiled to bytecode.
build: $(INSTALLED) $(SAM_INSTALLED)
	$(SAM) build --build-dir $(BUILD_DIR)
	$(BIN)/python scripts/trim_botocore.py $(BUILD_DIR)
	$(BIN)/python -m compileall -q -j 0 --invalidation-mode unchecked-hash $(BUILD_DIR)

## Deploy to AWS (sam deploy --guided; see docs/deploy.md).
deploy: build
	$(SAM) deploy --guided

## Point Telegram at the deployed webhook and register the command menu (STACK=stepwise).
webhook: $(INSTALLED)
	@$(BIN)/python scripts/set_webhook.py --stack $(STACK)

## Remove the virtual environments, the build and the caches.
clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache .chat.log .chat_history .chat_voice
