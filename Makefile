# Ferry: the two commands of the quick start are `make run` and `make test`.
SWIFT ?= swift
ARGS ?=

.PHONY: run build release test docker-check browser-test fuzz bench clean

run: release ## Run the service with embedded defaults (127.0.0.1:8080, ./spool)
	./.build/release/ferry serve $(ARGS)

build:
	@scripts/ensure-deps.sh build
	$(SWIFT) build

release:
	@scripts/ensure-deps.sh build
	$(SWIFT) build -c release

test: ## Build and run every test suite (starts its own nginx and fault origin on 127.0.0.1)
	@scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	python3 Tests/openapi/validate.py
	python3 Tests/docker/check_image.py --binary .build/debug/ferry
	FERRY_BIN=.build/debug/ferry scripts/browser-test.sh

docker-check: release ## Check the Dockerfile and that its runtime packages cover the release binary's libraries
	python3 Tests/docker/check_image.py --binary .build/release/ferry

browser-test: build ## The page in headless Chromium (installs chromium, chromium-driver, selenium)
	FERRY_BIN=.build/debug/ferry scripts/browser-test.sh

fuzz: ## Fuzz the HTTP request parser: make fuzz SECONDS=600
	scripts/fuzz-parser.sh $(or $(SECONDS),60)

clean:
	rm -rf .build
