# Two commands: `make demo` (set up, index the demo corpus, search, ask) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INDEX := .scoperag/index
export LITELLM_LOCAL_MODEL_COST_MAP := True
export MLFLOW_DISABLE_TELEMETRY := true
export HF_HUB_OFFLINE := 1

.PHONY: setup browser demo ship reference test lint slow scale bench fuzz adversarial screenshots clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) browser

# The web page's browser tests drive the system's Chromium (Debian package `chromium`; Playwright's own
# browser download does not work offline). Installed here when missing and run as root; otherwise the
# browser tests skip and say why.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium (Debian package) for the browser tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	else \
		echo "chromium is missing and this is not root: the browser tests will skip (apt-get install chromium)"; \
	fi

demo: setup
	$(BIN)/scoperag index datasets/demo --out $(INDEX)
	$(BIN)/scoperag search "monthly rent" --property "Banda Lane" --index $(INDEX) -k 3
	$(BIN)/scoperag ask "What is the monthly rent for Banda Lane and who is the tenant?" --property "Banda Lane" --index $(INDEX)

# The program `ask`, `serve` and `make demo` use by default (pipeline/export/shipped/): the program the
# answer stage job of SHIP_CONFIG exports, with each step run by the LM only where the LM beat its floor on
# validation (README "Results": on the embedded model, every step runs its floor).
SHIP_CONFIG ?= experiments/as_run/stage_answer_demo.toml
SHIPPED := pipeline/export/shipped
ship: setup
	@mkdir -p .scoperag
	$(BIN)/scoperag optimize $(SHIP_CONFIG) --json > .scoperag/ship.json
	$(BIN)/scoperag export $$($(BIN)/python -c 'import json; print(json.load(open(".scoperag/ship.json"))["run_id"])') --out $(SHIPPED) --overwrite

# The reference runs every clone lists and can compare and export (mlruns/reference/, committed): the runs
# RUNS names (ids or the 8-digit prefixes `scoperag runs` prints) from the local store, replacing the set.
reference: setup
	@test -n "$(RUNS)" || { echo 'name the runs: make reference RUNS="ID ..." (scoperag runs lists them)'; exit 2; }
	$(BIN)/scoperag reference $(RUNS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline signatures optimizers experiments

test: lint
	$(BIN)/pytest -q

slow: setup
	$(BIN)/pytest -q -m slow

# Ray (a local Ray with 2 CPUs) and the shared tracking server (real PostgreSQL and mlflow server).
scale: setup
	$(BIN)/pytest -q tests/evaluation/test_fanout.py tests/store/test_fanout_build.py \
		tests/experiments/test_fanout_jobs.py tests/experiments/test_team_server.py

fuzz: setup
	$(BIN)/python benchmarks/fuzz.py --seconds 60 --json benchmarks/results/fuzz.json

adversarial: setup
	$(BIN)/python benchmarks/adversarial.py --json benchmarks/results/adversarial.json

bench: setup
	$(BIN)/python benchmarks/retrieval.py --sizes 10000 100000

# The README's pictures of the page, taken with the embedded model (minutes per question).
screenshots: setup
	SCOPERAG_SCREENSHOTS=docs/screenshots $(BIN)/pytest -q -m live_lm tests/serving/test_screenshots.py

clean:
	rm -rf $(VENV) .scoperag
