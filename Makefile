# Two commands: `make demo` (set up, index the demo corpus, search, ask) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
INDEX := .scoperag/index
export LITELLM_LOCAL_MODEL_COST_MAP := True
export MLFLOW_DISABLE_TELEMETRY := true
export HF_HUB_OFFLINE := 1

.PHONY: setup demo test lint slow bench fuzz adversarial clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/scoperag index datasets/demo --out $(INDEX)
	$(BIN)/scoperag search "monthly rent" --property "Banda Lane" --index $(INDEX) -k 3
	$(BIN)/scoperag ask "What is the monthly rent for Banda Lane and who is the tenant?" --property "Banda Lane" --index $(INDEX)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pipeline signatures optimizers experiments

test: lint
	$(BIN)/pytest -q

slow: setup
	$(BIN)/pytest -q -m slow

fuzz: setup
	$(BIN)/python benchmarks/fuzz.py --seconds 60 --json benchmarks/results/fuzz.json

adversarial: setup
	$(BIN)/python benchmarks/adversarial.py --json benchmarks/results/adversarial.json

bench: setup
	$(BIN)/python benchmarks/retrieval.py --sizes 10000 100000

clean:
	rm -rf $(VENV) .scoperag
