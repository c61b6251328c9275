# The two commands: `make run` and `make test`. Everything they need is created here.
# Python 3.13, the Lambda runtime the functions run on (README, Performance). A pyenv shim
# answers `command -v python3.13` even when 3.13 is not the selected version, so each
# candidate must actually start and say it is 3.13.
PYTHON_VERSION := 3.13
comma := ,
PYTHON ?= $(shell for p in python$(PYTHON_VERSION) \
	$$(pyenv root 2>/dev/null)/versions/$(PYTHON_VERSION)*/bin/python$(PYTHON_VERSION); do \
	"$$p" -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma),$(PYTHON_VERSION))))' \
	2>/dev/null && { command -v "$$p"; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
# The locks (requirements*.txt) pin every package with its hashes; `make lock` compiles them
# from the requirements*.in files. pip installs them with --require-hashes: a package that is
# not pinned, or a file whose hash differs, stops the install.
# One stamp per install step, named after the lock files' checksum: editing a lock
# reinstalls exactly the steps that read it.
LOCAL_STAMP := $(VENV)/.local-$(shell cat requirements.txt requirements-local.txt | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-local.txt requirements-dev.txt | cksum | cut -d' ' -f1)
# Without --quiet: pip prints each package as it is collected and installed (progress).
# --no-compile: pip would byte-compile what it installs on one core; the test install runs
# compileall on every core after it instead (a first `make run`: 60 s of installing became 47).
PIP_INSTALL := $(BIN)/python -m pip install --disable-pip-version-check --progress-bar on --require-hashes --no-compile
COMPILE := $(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null
# `make run` compiles nothing up front: most of what it installs (moto's hundreds of services,
# cfn-lint) is never imported by the local stack, and Python compiles what it imports on
# first use. The test install (`venv`) compiles everything, for the benchmarks' cold starts.
PYTEST := $(BIN)/python -m pytest
# The unit and functional tiers run on every core (pytest-xdist), a test file per worker so
# that a file's module-level fixtures are built once: `make test-functional XDIST=` runs them
# in one process.
XDIST ?= -n auto --dist loadfile
STAGE ?= dev
REPLICA_REGIONS ?=
CHROMIUM ?= /usr/bin/chromium
# The Node the dashboard, the TypeScript SDK and the npm test tools are built for: the LTS
# line (Node 20 is end of life). An older Node still works for now, with a warning.
NODE_MAJOR := 22
# `make lock`: uv, from its own small hashed lock, in a virtualenv of its own (`make run` and
# `make test` never need it). Every lock is compiled for Lambda's platform and Python: the
# Lambda's (requirements.txt, what `chalice package` vendors) must be, and the others hold
# the same versions (each file has the hashes of every wheel of a version, so they install
# on this machine too).
LOCK_VENV := build/lock
UV := $(LOCK_VENV)/bin/uv
LOCK_PLATFORM := x86_64-manylinux_2_28
UV_COMPILE := $(UV) pip compile --quiet --upgrade --generate-hashes \
	--python-platform $(LOCK_PLATFORM) --python-version $(PYTHON_VERSION) \
	--custom-compile-command "make lock"

.PHONY: help venv run test lint test-unit test-functional test-e2e test-interop test-python \
        test-sdk-python test-sdk-typescript test-infra test-contract bench load package deploy \
        import-legacy clean dashboard chromium test-dashboard lock node-version \
        docs docs-serve api-reference

help:
	@echo "Targets:"
	@echo "  make run                 the service on http://127.0.0.1:8000 (the dashboard at /dashboard/)"
	@echo "                           with moto, a development OpenID issuer and MCP server (installs"
	@echo "                           only what they need: requirements-local.txt); writes its connection"
	@echo "                           settings to .local/connection.env, which the local tools read;"
	@echo "                           make run REGIONS=3: three Regions' APIs (8000-8002) and data-plane"
	@echo "                           gates (8004-8006) over the one store, the banner lists each"
	@echo "  make test                lint, type-check, every test tier, both SDKs' and the"
	@echo "                           dashboard's tests, and the docs site (make docs), side by side"
	@echo "                           where they can be; it ends with each tier's time"
	@echo "  make lint                ruff, mypy, the import layers and the OpenAPI document's validation"
	@echo "  make test-unit           unit tests (no I/O)"
	@echo "  make test-functional     the app through chalice's test client on moto"
	@echo "  make test-infra          package every stage, then hold the templates against the code"
	@echo "  make test-e2e            the local stack over real HTTP (incl. the fault test)"
	@echo "  make test-interop        other people's clients' shapes and the MCP conformance tool's code grant"
	@echo "  make test-contract       schemathesis against the local stack (admin key, user token)"
	@echo "  make test-python         lint, unit, functional, infra, e2e and contract"
	@echo "  make test-sdk-python     the Python SDK's tests"
	@echo "  make test-sdk-typescript the TypeScript SDK's tests"
	@echo "  make bench               authorizer benchmark against moto"
	@echo "  make load                bounded load on the local stack: ARGS=\"--requests N --concurrency C\""
	@echo "  make package             chalice package for STAGE, merged with infra/, then cfn-lint"
	@echo "  make deploy              check its inputs, package, then deploy STAGE (docs: Deploy)"
	@echo "  make import-legacy       import legacy keys: ARGS=\"keys.jsonl [--dry-run] [--local]\""
	@echo "                           (--local: into the stack make run started)"
	@echo "  make dashboard           build the dashboard's static files (npm)"
	@echo "  make chromium            install Debian's chromium for the browser tests (root)"
	@echo "  make test-dashboard      the dashboard's unit and browser tests"
	@echo "  make docs                the docs site into site/ (MkDocs, strict: a broken link fails),"
	@echo "                           browsable from disk; its tools in build/docs (requirements-docs.txt)"
	@echo "  make docs-serve          the docs site on http://127.0.0.1:8008 (DOCS_PORT), rebuilt on edits"
	@echo "  make api-reference       write docs/reference/api.md from the OpenAPI document"
	@echo "  make venv                the virtualenv with every tool (.venv), from the hashed locks"
	@echo "  make lock                compile requirements*.in into the locks (requirements*.txt: every"
	@echo "                           package pinned, with hashes), upgrading what the .in files allow"
	@echo "  make node-version        warn when the Node on the PATH is older than Node $(NODE_MAJOR) LTS"
	@echo "  make clean               remove the virtualenv, caches and build/"
	@echo "  make help                this list"
	@echo "Variables (make VAR=value target, or in the environment):"
	@echo "  PORT=8000                make run: the service's port (PORT=0: free ports for everything)"
	@echo "  IDP_PORT=8001            make run: the development OpenID issuer's port"
	@echo "  MCP_PORT=8002            make run: the development MCP server's port"
	@echo "  MOTO_PORT=(free)         make run: moto's port (DynamoDB and KMS)"
	@echo "  SCAN_SIGNER_PORT=8003    make run: the local secret-scanning signer and key list"
	@echo "  REGIONS=1                make run: Regions served over the one store, 1 to 3 (docs/scaling.md);"
	@echo "                           with 3 the issuer, MCP and signer defaults move to 8003, 8004, 8007"
	@echo "  TRUSTED_ISSUERS=[...]    make run: more OpenID issuers to trust (docs: Configuration)"
	@echo "  ALLOWED_ORIGINS=[...]    make run: browser origins allowed to call the API (CORS)"
	@echo "  STAGE=dev                package, deploy: dev, staging or prod"
	@echo "  REPLICA_REGIONS=r2,r3    package: the stage global, homed in AWS_REGION (docs/scaling.md)"
	@echo "  DEPLOY_BUCKET, AWS_REGION  deploy: the artifact bucket and region"
	@echo "  ARGS=...                 extra arguments for bench, load, deploy, import-legacy"
	@echo "  PYTHON=python3.13        the interpreter the virtualenv is made from"
	@echo "  CHROMIUM=/usr/bin/chromium  test-dashboard: the browser binary"
	@echo "  XDIST=\"-n auto --dist loadfile\"  test-functional: pytest-xdist's workers (XDIST= one process)"

# A virtualenv of another Python (made before the move to 3.13) is made anew.
ifneq ($(wildcard $(BIN)/python),)
ifneq ($(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])'),$(PYTHON_VERSION))
$(info ==> $(VENV) runs another Python: recreating it with $(PYTHON_VERSION))
$(shell rm -rf $(VENV))
endif
endif

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "make: Python $(PYTHON_VERSION) is needed (python$(PYTHON_VERSION) on PATH, or pyenv install $(PYTHON_VERSION)); or set PYTHON=/path/to/python$(PYTHON_VERSION)"; exit 1; }
	@echo "==> creating the virtualenv in $(VENV) with $(PYTHON) (Python $(PYTHON_VERSION))"
	$(PYTHON) -m venv $(VENV)

$(LOCAL_STAMP): requirements.txt requirements-local.txt | $(BIN)/python
	@echo "==> installing the service and the local stack (requirements-local.txt, hashes checked)"
	$(PIP_INSTALL) -r requirements-local.txt
	@rm -f $(VENV)/.local-*
	@touch $(LOCAL_STAMP)

$(STAMP): $(LOCAL_STAMP) requirements-dev.txt
	@echo "==> installing the test, lint and packaging tools (requirements-dev.txt, hashes checked)"
	$(PIP_INSTALL) -r requirements-dev.txt
	@echo "==> byte-compiling them (every core)"
	@$(COMPILE)
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

# The connection settings go to .local/connection.env (infra/connection.py): every local tool
# reads them, whatever ports this run uses.
# The service's packages (pip) and the dashboard (npm) are independent: they install side by
# side, so a first `make run` waits for the longer of the two, not for both.
run:
	@echo "==> installing the service's packages and building the dashboard, side by side"
	@$(MAKE) --no-print-directory -j2 $(LOCAL_STAMP) dashboard
	$(BIN)/python -m local.stack --connection-file .local/connection.env

lint: venv
	@echo "==> ruff and mypy"
	$(BIN)/ruff check app.py chalicelib infra local tools tests bench examples
	$(BIN)/mypy
	@echo "==> chalicelib's layers and import cycles (import-linter: [tool.importlinter] in pyproject.toml)"
	$(BIN)/lint-imports --no-logo
	@echo "==> the OpenAPI document (GET /openapi.json) against the OpenAPI 3.1 specification"
	$(BIN)/python -m tools.openapi build/openapi.json
	$(BIN)/openapi-spec-validator build/openapi.json

test-unit: venv
	@echo "==> unit tests"
	$(PYTEST) tests/unit -q

test-functional: venv
	@echo "==> functional tests (chalice.test.Client on moto)"
	$(PYTEST) tests/functional -q $(XDIST)

test-e2e: venv node-version
	@echo "==> end-to-end tests (the local stack over real HTTP)"
	$(PYTEST) tests/e2e -q

# The shapes other clients send (the memory service's test kit: camelCase bodies, empty values,
# grant_type in JSON, `error` read from refusals), through our own Python SDK and raw HTTP,
# and the MCP conformance tool's authorization code grant, against a local stack of its own.
test-interop: venv node-version
	@echo "==> interop tests (other clients' shapes against the local stack)"
	PYTHONPATH=sdks/python/src $(PYTEST) tests/interop -q

# schemathesis against the running local stack with tests/contract/schemathesis.toml, once
# as an admin key and once as a user token; it prints operations and test-case counts.
test-contract: venv
	@echo "==> contract tests: schemathesis against the local stack (every check, bounded examples)"
	$(BIN)/python -m tests.contract.stage $(ARGS)

test-python: lint test-unit test-functional test-infra test-e2e test-contract

test-sdk-python: venv
	@if [ -f sdks/python/Makefile ]; then $(MAKE) -C sdks/python test PYTHON=$(abspath $(BIN)/python); fi

test-sdk-typescript: venv node-version
	@if [ -f sdks/typescript/Makefile ]; then $(MAKE) -C sdks/typescript test PYTHON=$(abspath $(BIN)/python); fi

# Every tier, side by side where they can be (tests/lanes.py): lint beside the unit tests,
# the functional tests alone on every core, then the tiers that drive a stack or a browser
# in three lanes; it ends with each tier's wall and CPU time. What the tiers share is built
# first, so that no two build the same thing at once.
test: venv dashboard chromium node-version
	@$(MAKE) --no-print-directory -C sdks/python install PYTHON=$(abspath $(BIN)/python)
	$(BIN)/python -m tests.lanes

# The dashboard's static files, built from dashboard/ into chalicelib/dashboard/static/
# (never committed): `make run` serves them, `make package` ships them in the Lambda.
dashboard: node-version
	@$(MAKE) --no-print-directory -C dashboard build

# A warning, not a stop: everything still builds and passes on Node 20.
node-version:
	@version=$$(node -p process.versions.node 2>/dev/null); \
	if [ -z "$$version" ]; then \
		echo "make: no node on the PATH: the dashboard, the TypeScript SDK and the OpenID tests need Node $(NODE_MAJOR) LTS" >&2; \
	elif [ "$${version%%.*}" -lt $(NODE_MAJOR) ]; then \
		echo "make: WARNING: Node $$version is on the PATH; this project targets Node $(NODE_MAJOR) LTS" >&2; \
		echo "make: WARNING: (Node $${version%%.*} is end of life). It still works for now; install Node $(NODE_MAJOR) or newer." >&2; \
	fi

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
	$(BIN)/python -m tools.package --stage $(STAGE) $(if $(REPLICA_REGIONS),--replica-regions $(REPLICA_REGIONS))

# Its inputs first (stage, bucket, region, the AWS CLI: every problem at once), then the
# package: a missing bucket is said before a minute of building, not after.
deploy: venv
	@$(BIN)/python -m tools.deploy --stage $(STAGE) --check-inputs $(ARGS)
	@$(MAKE) --no-print-directory package STAGE=$(STAGE)
	@echo "==> deploy build/package/$(STAGE) with the AWS CLI (needs credentials, DEPLOY_BUCKET, AWS_REGION)"
	$(BIN)/python -m tools.deploy --stage $(STAGE) $(ARGS)

bench: venv
	@echo "==> authorizer benchmark (moto in its own process; exits 1 when a target is missed)"
	$(BIN)/python -m bench.authorizer $(ARGS)

# Bounded (a fixed number of requests at a fixed concurrency, loopback only); exits 1 when a
# check fails. Its checks also run, smaller, in test-e2e (tests/e2e/test_load.py).
load: venv
	@echo "==> bounded load on the local stack: throughput, latency, moto's memory, and what must hold under it"
	$(BIN)/python -m bench.load $(ARGS)

# The docs site: the API reference page must be what the OpenAPI document gives (written by
# `make api-reference`), then MkDocs builds strictly (mkdocs.yml). No service, no dashboard.
# The docs tools (MkDocs, Material) in a virtualenv of their own, from their hashed lock:
# building the docs installs nothing into .venv (which a running `make run` uses). The API
# reference's check needs only the service's packages, which `make run` installs.
DOCS_VENV := build/docs
DOCS_STAMP := $(DOCS_VENV)/.installed-$(shell cat requirements-docs.txt | cksum | cut -d' ' -f1)
DOCS_PORT ?= 8008

$(DOCS_STAMP): requirements-docs.txt
	@test -n "$(PYTHON)" || { echo "make: Python $(PYTHON_VERSION) is needed (see make venv)"; exit 1; }
	@echo "==> installing the docs tools (requirements-docs.txt, hashes checked) in $(DOCS_VENV)"
	@test -x $(DOCS_VENV)/bin/python || $(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-docs.txt
	@rm -f $(DOCS_VENV)/.installed-*
	@touch $(DOCS_STAMP)

docs: $(LOCAL_STAMP) $(DOCS_STAMP)
	@echo "==> the docs site: the API reference against the OpenAPI document, then mkdocs build --strict"
	$(BIN)/python -m tools.openapi build/openapi.json
	$(BIN)/python -m tools.api_reference build/openapi.json --check
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --quiet
	@echo "==> site/index.html (open it from disk), or: make docs-serve"

# The site on http://127.0.0.1:$(DOCS_PORT), rebuilt as the docs are edited.
docs-serve: docs
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs serve --strict -a 127.0.0.1:$(DOCS_PORT)

api-reference: venv
	$(BIN)/python -m tools.openapi build/openapi.json
	$(BIN)/python -m tools.api_reference build/openapi.json

# Only what the local stack needs (requirements-local.txt): run next to `make run`, it must
# not reinstall the development packages under the stack's feet.
import-legacy: $(LOCAL_STAMP)
	$(BIN)/python -m tools.import_legacy_keys $(ARGS)

$(UV): requirements-lock.txt
	@test -n "$(PYTHON)" || { echo "make: Python $(PYTHON_VERSION) is needed (python$(PYTHON_VERSION) on PATH, or pyenv install $(PYTHON_VERSION)); or set PYTHON=/path/to/python$(PYTHON_VERSION)"; exit 1; }
	@echo "==> installing the locking tool (uv, requirements-lock.txt, hashes checked) in $(LOCK_VENV)"
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-lock.txt
	@touch $(UV)

# Lambda's lock first; the development lock is held to it, and the local stack's to that
# (a subset of it), so that the three agree on every version they share.
lock: $(UV)
	@echo "==> compiling the locks: requirements.in (Lambda), requirements-dev.in, requirements-local.in, requirements-docs.in"
	$(UV_COMPILE) requirements-lock.in -o requirements-lock.txt
	$(UV_COMPILE) requirements.in -o requirements.txt
	$(UV_COMPILE) requirements-dev.in -c requirements.txt -o requirements-dev.txt
	$(UV_COMPILE) requirements-local.in -c requirements-dev.txt -o requirements-local.txt
	$(UV_COMPILE) requirements-docs.in -c requirements-dev.txt -o requirements-docs.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache build dist site chalicelib/dashboard/static
	@$(MAKE) --no-print-directory -C dashboard clean
