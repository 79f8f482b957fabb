# Ferry: the two commands of the quick start are `make run` and `make test`.
SWIFT ?= swift
ARGS ?=

.PHONY: run build release install uninstall test busy-test docker-check browser-test crash-suite fault-suite diskfull-suite webhook-suite delivery-suite hostile-suite aria2-suite fetch-suite load-suite cluster-suite fuzz bench clean

run: release ## Run the service with embedded defaults (127.0.0.1:8080, ./spool)
	./.build/release/ferry serve $(ARGS)

# make install [PREFIX=/usr/local] [DESTDIR=]: the release build as $(PREFIX)/bin/ferry and the browser page in
# $(PREFIX)/share/ferry/Public, where an installed `ferry serve` finds it. DESTDIR stages the tree for a package.
PREFIX ?= /usr/local
DESTDIR ?=
FERRY_BINDIR = $(DESTDIR)$(PREFIX)/bin
FERRY_DATADIR = $(DESTDIR)$(PREFIX)/share/ferry

install: release ## Install ferry into $(PREFIX)/bin (default /usr/local/bin) and its page into $(PREFIX)/share/ferry
	install -d "$(FERRY_BINDIR)" "$(FERRY_DATADIR)"
	install -m 0755 .build/release/ferry "$(FERRY_BINDIR)/ferry"
	rm -rf "$(FERRY_DATADIR)/Public"
	cp -R Public "$(FERRY_DATADIR)/Public"
	chmod -R u=rwX,go=rX "$(FERRY_DATADIR)/Public"
	@echo "installed $(FERRY_BINDIR)/ferry"

uninstall: ## Remove what make install put in $(PREFIX) (same PREFIX and DESTDIR)
	rm -f "$(FERRY_BINDIR)/ferry"
	rm -rf "$(FERRY_DATADIR)/Public"
	rmdir "$(FERRY_DATADIR)" 2>/dev/null || true

build:
	@scripts/ensure-deps.sh build
	$(SWIFT) build

release:
	@scripts/ensure-deps.sh build
	$(SWIFT) build -c release

test: ## Build and run every test suite (starts its own nginx and fault origin on 127.0.0.1)
	@scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests
	scripts/swift-test.sh
	python3 Tests/openapi/validate.py
	python3 Tests/docker/check_image.py --binary .build/debug/ferry
	FERRY_BIN=.build/debug/ferry scripts/browser-test.sh
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fault_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/hostile_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/aria2_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/crash_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/load_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/webhook_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/delivery_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/cluster_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/store_loss_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fencing_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/chaos_suite.py --quick
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/seam_suite.py --quick
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fetch_suite.py
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fetch_cluster_suite.py
	@if [ "$$(id -u)" = 0 ]; then FERRY_BIN=.build/debug/ferry python3 Tests/suites/diskfull_suite.py; \
	else echo "disk-full suite skipped: it mounts a tmpfs, run 'sudo make diskfull-suite'"; fi

busy-test: ## make test with stress-ng --cpu 1 running beside it (a busy machine); stress-ng stopped by pid
	scripts/busy-test.sh

docker-check: release ## Check the Dockerfile and that its runtime packages cover the release binary's libraries
	python3 Tests/docker/check_image.py --binary .build/release/ferry

browser-test: build ## The page in headless Chromium (installs chromium, chromium-driver, selenium)
	FERRY_BIN=.build/debug/ferry scripts/browser-test.sh

# The robustness suites (Tests/suites; each ends with "N passed, N failed"). make test runs the
# fault, hostile-input, aria2, webhook, fetch-through, store-loss and disk-full suites, the full crash, load (60–120 s, its
# RSS check included, on the debug build), delivery and cluster runs, and the quick chaos and seam runs; the load
# suite's soak and the long chaos and seam runs take longer or need a quiet machine.
crash-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/crash_suite.py $(ARGS)
fault-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fault_suite.py $(ARGS)
diskfull-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/diskfull_suite.py $(ARGS)
webhook-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/webhook_suite.py $(ARGS)
delivery-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/delivery_suite.py $(ARGS)
hostile-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/hostile_suite.py $(ARGS)
aria2-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/aria2_suite.py $(ARGS)
cluster-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/cluster_suite.py $(ARGS)
store-loss-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/store_loss_suite.py $(ARGS)
fencing-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fencing_suite.py $(ARGS)
chaos-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/chaos_suite.py $(ARGS)
fetch-suite: build
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fetch_suite.py $(ARGS)
	FERRY_BIN=.build/debug/ferry python3 Tests/suites/fetch_cluster_suite.py $(ARGS)
load-suite: release
	FERRY_BIN=.build/release/ferry python3 Tests/suites/load_suite.py $(ARGS)

bench: release ## Benchmarks against curl and aria2c, side by side (bench/README.md); BENCH_SCALE=small for a smoke run
	FERRY_BIN=.build/release/ferry bench/run.sh

fuzz: ## Fuzz the HTTP request parser: make fuzz SECONDS=600
	scripts/fuzz-parser.sh $(or $(SECONDS),60)

clean:
	rm -rf .build
