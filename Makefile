# Two commands do all set-up on a fresh Debian machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CONFIG ?= templates/companies/startup.yaml
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast lint bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -m venv --help >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq python3-venv)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

install: $(STAMP)

run: install sandbox-image
	$(BIN)/synthorg run $(CONFIG) --out out/default --overwrite --report

test: install sandbox-image browser
	$(BIN)/python -m pytest -q --durations=25

# headless Chromium for the report's tests (Playwright drives Debian's, not a download)
.PHONY: browser
browser:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

lint: install
	$(BIN)/ruff check synthorg actors sandbox tests benchmarks
	$(BIN)/mypy

bench: install
	$(BIN)/synthorg bench

# SecOps's second look, retrained on every labelled corpus under tests/data/secops
.PHONY: second-look
second-look: install
	$(BIN)/synthorg secops train tests/data/secops

# LLM mode on this machine: the local OpenAI-compatible server (synthorg/llm/fake_server.py),
# the default company with its seniors and up reasoning through it, the replies kept in a cassette
LLM_PORT ?= 8765
.PHONY: run-llm
run-llm: install sandbox-image
	@mkdir -p out && rm -f out/llm-cassette.jsonl
	@$(BIN)/python -m synthorg.llm.fake_server --port $(LLM_PORT) --latency 0.05 > out/llm-server.log 2>&1 & \
	server=$$!; sleep 2; \
	$(BIN)/synthorg run $(CONFIG) --out out/llm --overwrite --set llm.enabled=true \
	  --set llm.base_url=http://127.0.0.1:$(LLM_PORT)/v1 --set llm.model=local \
	  --record-cassette out/llm-cassette.jsonl; rc=$$?; kill $$server; exit $$rc

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache

# Tool sandboxes (Docker + MCP): a Docker daemon, then the image `synthorg-sandbox`, built
# offline from Debian packages (sandbox/Dockerfile is the registry route).
.PHONY: docker sandbox-image

docker:
	@sh sandbox/ensure_docker.sh

sandbox-image: docker
	@sh sandbox/build_image.sh
