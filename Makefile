# computeplane-fn — run `make` for the list of targets.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
KUSTOMIZE_VERSION := v5.8.2
KUSTOMIZE := $(BIN)/kustomize
FUZZTIME ?= 60s

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/computeplane-fn
	$(GO) build -o $(BIN)/computeplane-fn ./cmd/computeplane-fn

$(KUSTOMIZE):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

.PHONY: tools
tools: $(KUSTOMIZE) ## Install the tools the tests use (kustomize) into bin/

.PHONY: demo
demo: build ## Render the bundled example fleet (examples/quickstart) to stdout
	cd examples/quickstart && $(BIN)/computeplane-fn config.yaml

.PHONY: test
test: tools build ## Run every test (unit, golden fixtures, examples, end to end, a short fuzz pass)
	KUSTOMIZE=$(KUSTOMIZE) $(GO) test -count=1 ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(SHORT_FUZZTIME)

# Fuzz targets as package:target; go test runs one -fuzz target per call.
FUZZ_TARGETS := ./pkg/input:FuzzDecode ./fn:FuzzProcessor
SHORT_FUZZTIME ?= 10s

.PHONY: fuzz
fuzz: ## Run every fuzz target for $(FUZZTIME) (default 60s); findings land in testdata/fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME); \
	done

.PHONY: golden
golden: ## Rewrite the golden files of fixtures/, examples/ and the summaries (review the diff!)
	KUSTOMIZE=$(KUSTOMIZE) $(GO) test ./fn/ ./e2e/ ./examples/ ./pkg/summary/ -run 'TestFixtures$$|TestQuickstartGolden|TestExamples|TestSummary' -update

BENCHFLAGS ?=

.PHONY: bench
bench: build ## Benchmarks: stages and unit builds, then 1,000 and 10,000 generated tenants through the CLI against the scale targets
	$(GO) test -run '^$$' -bench . -benchmem ./internal/bench/ ./pkg/units/
	$(GO) build -o $(BIN)/fleetbench ./internal/bench/cmd/fleetbench
	$(BIN)/fleetbench -bin $(BIN)/computeplane-fn -work $(CURDIR)/.work/bench $(BENCHFLAGS)

.PHONY: lint
lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

include tools/e2e/e2e.mk

.PHONY: examples
examples: tools build ## Run the examples and compare them with their expected output
	KUSTOMIZE=$(KUSTOMIZE) $(GO) test -count=1 ./examples/
