# The two commands: `make run` and `make test`. Everything they need is created here.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)
PYTEST := $(BIN)/python -m pytest
STAGE ?= dev
CHROMIUM ?= /usr/bin/chromium

.PHONY: help venv run test lint test-unit test-functional test-e2e test-python \
        test-sdk-python test-sdk-typescript test-infra bench package deploy import-legacy clean \
        dashboard chromium test-dashboard

help:
	@echo "make run     start the service locally on http://127.0.0.1:8000 (PORT overrides)"
	@echo "             and the dashboard on http://127.0.0.1:8000/dashboard/"
	@echo "make test    lint, type-check and run every test tier"
	@echo "make bench   authorizer benchmark against the local stack"
	@echo "make package STAGE=dev|staging|prod   build the CloudFormation template"
	@echo "make deploy STAGE=dev|staging|prod    package, then deploy it (README, Deploy)"

$(STAMP): requirements.txt requirements-dev.txt
	@echo "==> creating the virtualenv in $(VENV) and installing requirements-dev.txt"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

run: venv dashboard
	$(BIN)/python -m local.stack

lint: venv
	@echo "==> ruff and mypy"
	$(BIN)/ruff check app.py chalicelib infra local tools tests bench
	$(BIN)/mypy

test-unit: venv
	@echo "==> unit tests"
	$(PYTEST) tests/unit -q

test-functional: venv
	@echo "==> functional tests (chalice.test.Client on moto)"
	$(PYTEST) tests/functional -q

test-e2e: venv
	@echo "==> end-to-end tests (the local stack over real HTTP)"
	$(PYTEST) tests/e2e -q

test-python: lint test-unit test-functional test-infra test-e2e

test-sdk-python: venv
	@if [ -f sdks/python/Makefile ]; then $(MAKE) -C sdks/python test PYTHON=$(abspath $(BIN)/python); fi

test-sdk-typescript: venv
	@if [ -f sdks/typescript/Makefile ]; then $(MAKE) -C sdks/typescript test PYTHON=$(abspath $(BIN)/python); fi

test: test-python test-sdk-python test-sdk-typescript test-dashboard

# The dashboard's static files, built from dashboard/ into chalicelib/dashboard/static/
# (never committed): `make run` serves them, `make package` ships them in the Lambda.
dashboard:
	@$(MAKE) --no-print-directory -C dashboard build

# Debian's Chromium for the browser tests. Browser downloads (`playwright install`) do not
# work where only the package registries are reachable, so the system package it is.
chromium:
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "==> installing Debian's chromium (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "The browser tests need Chromium at $(CHROMIUM). Install it as root with" >&2; \
		echo "  apt-get update && apt-get install -y chromium" >&2; \
		echo "or point CHROMIUM at a Chrome or Chromium binary: make test-dashboard CHROMIUM=/path" >&2; \
		exit 1; \
	fi

test-dashboard: venv dashboard chromium
	@echo "==> dashboard: type-check and unit tests, then the browser tests (Playwright, Chromium)"
	@$(MAKE) --no-print-directory -C dashboard check
	CHROMIUM=$(CHROMIUM) $(PYTEST) tests/browser -q

# The packaged templates held against the code; the AWS operations it checks the IAM policy
# against are those test-functional recorded (build/aws-operations.json).
test-infra: venv dashboard
	@echo "==> infrastructure tests (package every stage, then hold the templates against the code)"
	@for stage in dev staging prod; do $(BIN)/python -m tools.package --stage $$stage || exit 1; done
	$(PYTEST) tests/infra -q

package: venv dashboard
	@echo "==> chalice package, stage $(STAGE), merged with infra/resources.json; then cfn-lint"
	$(BIN)/python -m tools.package --stage $(STAGE)

deploy: package
	@echo "==> deploy build/package/$(STAGE) with the AWS CLI (needs credentials, DEPLOY_BUCKET, AWS_REGION)"
	$(BIN)/python -m tools.deploy --stage $(STAGE) $(ARGS)

bench: venv
	@echo "==> authorizer benchmark (moto in its own process; exits 1 when a target is missed)"
	$(BIN)/python -m bench.authorizer $(ARGS)

import-legacy: venv
	$(BIN)/python -m tools.import_legacy_keys $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist chalicelib/dashboard/static
	@$(MAKE) --no-print-directory -C dashboard clean
