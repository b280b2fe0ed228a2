# The course's commands. Quick start:  make course   then   make test
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.requirements-installed

.PHONY: course build book test test-deps test-cpu bench gpu-check clean help hub hub-deps handout

help:
	@echo "make course     install, build the runtime, execute the chapters: site in _build/html"
	@echo "make test       every test (runtime on all available backends)"
	@echo "make build      rebuild the native libraries after editing ops/ or runtime/"
	@echo "make handout    a student's copies of the labs in handout/ (then: .venv/bin/jupyter lab handout/)"
	@echo "make bench      benchmark every op against torch (JSON in _build/bench.json)"
	@echo "make hub        the course server: JupyterHub for the roster in course.toml (root; README)"
	@echo "make gpu-check  the whole GPU check (run on the GPU machine: scripts/gpu_check.sh)"

# The runtime (requirements.txt's `-e .`) builds here without pip's build isolation, with the venv's
# scikit-build-core and ninja: `make build` then finds build/ configured by the same tools and has
# nothing to redo (with isolation, the temporary build env's ninja vanished and build/ was rebuilt
# from scratch, nvcc and ptxas included).
$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip >/dev/null
	$(BIN)/pip install $$(grep -E '^(scikit-build-core|ninja)' requirements.txt)
	$(BIN)/pip install --no-build-isolation -r requirements.txt
	touch $@

# Incremental rebuild of liboprt_* (scikit-build-core keeps its CMake tree in build/).
build: $(STAMP)
	$(BIN)/pip install --no-deps --no-build-isolation -e . -q

# The site shows the student versions of the labs (book/labs/*.ipynb, generated, never committed).
book: build
	$(BIN)/python -m operator_course.grader.release labs -o book/labs --site
	$(BIN)/jupyter-book build . -W -n --keep-going
	touch _build/html/.nojekyll  # a static host (GitHub Pages) serves _static/ and _sources/ as they are

course: book
	@echo "course site: _build/html/index.html"

# A student's copies of the labs (no solutions, no hidden checks) in handout/, beside labs/ so the
# chapter links resolve. Work there: .venv/bin/jupyter lab handout/
handout: $(STAMP)
	$(BIN)/python -m operator_course.grader.release labs -o handout
	@echo "now: .venv/bin/jupyter lab handout/"

# Every test: runtime (all available backends), chapters under nbval, and the built site
# in headless Chromium; so the site is built first, and the hub's proxy installed where npm is
# (else tests/hosting/test_hub.py skips; with CI=true it fails).
test: book test-deps
	$(BIN)/python -m pytest tests -q -n 2 --dist loadgroup --durations=25  # two workers (see tests/conftest.py); the slowest: where to cut

test-deps:
	@if command -v npm >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory hub-deps || echo "WARNING: npm ci failed: tests/hosting/test_hub.py skips" >&2; \
	else echo "note: no npm (apt-get install npm): tests/hosting/test_hub.py skips" >&2; fi

# The hub's proxy (npm: configurable-http-proxy, pinned by package-lock.json) into node_modules/.
hub-deps: node_modules/.bin/configurable-http-proxy
node_modules/.bin/configurable-http-proxy: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

hub: build hub-deps
	$(BIN)/python -m operator_course.hosting serve --config course.toml

bench: build
	$(BIN)/python tests/run_ops.py --op all --mode bench --json _build/bench.json

gpu-check:
	bash scripts/gpu_check.sh

clean:
	rm -rf build _build
