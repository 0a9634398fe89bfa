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
build: ## Build bin/computeplane-fn (stamped with the version and commit, see Release below)
	@$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/computeplane-fn ./cmd/computeplane-fn

$(KUSTOMIZE):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

# kpt runs the kpt example (examples/kpt) for real. It is not installed here:
# it comes from the system (the Debian package google-cloud-cli-kpt) or from
# KPT; the examples' tests fail, saying so, without it.
KPT ?= kpt

.PHONY: tools
tools: $(KUSTOMIZE) ## Install the tools the tests use (kustomize) into bin/, and show which kpt they run
	@if command -v $(KPT) >/dev/null; then echo "kpt: $$(command -v $(KPT)), version $$($(KPT) version)"; \
	else echo "kpt: not found ($(KPT)); the kpt tests of examples/ will fail: install kpt (Debian: google-cloud-cli-kpt) or set KPT"; fi

.PHONY: demo
demo: build ## Render the bundled example fleet (examples/quickstart) to stdout, then its summary: the tenants and where their apps run
	@cd examples/quickstart && $(BIN)/computeplane-fn config.yaml --summary -

.PHONY: test
test: tools build ## Run every test (unit, golden fixtures, examples, end to end, a short fuzz pass)
	KUSTOMIZE=$(KUSTOMIZE) $(GO) test -count=1 ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(SHORT_FUZZTIME)

# Fuzz targets as package:target; go test runs one -fuzz target per call.
FUZZ_TARGETS := ./pkg/input:FuzzDecode ./fn:FuzzProcessor ./fn:FuzzReadBack ./internal/yaml11:FuzzMisread
SHORT_FUZZTIME ?= 100x

.PHONY: fuzz
fuzz: ## Run every fuzz target for $(FUZZTIME) (default 60s); findings land in testdata/fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME); \
	done

.PHONY: golden
golden: $(KUSTOMIZE) ## Rewrite the golden files of fixtures/ (streams and fleet folders), examples/ and the summaries (review the diff!)
	KUSTOMIZE=$(KUSTOMIZE) $(GO) test ./fn/ ./e2e/ ./examples/ ./pkg/summary/ ./pkg/units/ -run 'TestFixtures$$|TestQuickstartGolden|TestExamples|TestSummary|TestFleetFolderGolden' -update

.PHONY: docs
docs: ## Rewrite the config reference in docs/function.md from the config's JSON Schema
	$(GO) test ./internal/testkit/configdoc/ -run '^TestFunctionDoc$$' -count=1 -update

BENCHFLAGS ?=
# BASELINE=path/to/old/computeplane-fn: fleetbench renders every fleet with it
# too and compares times, memory and output (see docs/performance.md).
BASELINE ?=

.PHONY: bench
bench: build ## Benchmarks: stages, unit builds and the guard's admission cost, then 1,000 and 10,000 generated tenants through the CLI against the scale targets (BASELINE=old binary to compare)
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/pipeline/ ./pkg/units/ ./pkg/render/
	$(GO) build -o $(BIN)/fleetbench ./internal/testkit/bench/cmd/fleetbench
	$(BIN)/fleetbench -bin $(BIN)/computeplane-fn -work $(CURDIR)/.work/bench $(if $(BASELINE),-baseline $(BASELINE)) $(BENCHFLAGS)

.PHONY: lint
lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

include tools/e2e/e2e.mk

.PHONY: examples
examples: tools build ## Run the examples and compare them with their expected output
	KUSTOMIZE=$(KUSTOMIZE) $(GO) test -count=1 ./examples/

# ---------------------------------------------------------------------------
# Release (docs/release.md): version stamping, static reproducible binaries,
# SBOM, checksums and the function's container image. The tools that make the
# SBOM and the image live in their own Go module (tools/release), so that the
# function's module and binary never depend on go-containerregistry.

# VERSION and COMMIT are stamped into every build the Makefile makes; both can
# be set on the command line (make dist VERSION=v0.1.0). They and the commit's
# time are read from Git once, when make starts, so that a long build names one
# commit throughout. Outside Git: VERSION=(devel), COMMIT=unknown, time 0.
ifndef VERSION
VERSION := $(shell tools/release/version.sh)
endif
ifndef COMMIT
COMMIT := $(or $(shell git rev-parse --verify HEAD 2>/dev/null),unknown)
endif
# The commit's time (seconds since 1970) dates the image and the SBOM, so that
# the same commit gives the same bytes.
ifndef SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH := $(or $(shell git log -1 --format=%ct HEAD 2>/dev/null),0)
endif
VERSION_PKG := github.com/computeplane-dev/computeplane-fn/internal/version
LDFLAGS = -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)
# The tests that build bin/computeplane-fn themselves (examples/) stamp it too.
export COMPUTEPLANE_FN_LDFLAGS = $(LDFLAGS)

DIST ?= $(CURDIR)/dist
DIST_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
IMAGE_PLATFORMS := linux/amd64 linux/arm64
IMAGE_REPO ?= ghcr.io/computeplane-dev/computeplane-fn
IMAGE_SOURCE ?= https://github.com/computeplane-dev/computeplane-fn
# The SPDX license expression of the OCI label and the SBOM (see docs/release.md).
LICENSES ?= Apache-2.0
# Static (no cgo, so no dynamic loader), no build paths (-trimpath), no VCS
# or build ID that could differ between two builds of one commit, stripped;
# the micro-architecture levels pinned so that the environment cannot change
# the code generated.
DIST_LDFLAGS = -s -w -buildid= $(LDFLAGS)
DIST_ENV := CGO_ENABLED=0 GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT= GOFLAGS=-buildvcs=false
RELEASE_TOOL := $(BIN)/release

.PHONY: dist-bin
dist-bin: ## Static release binaries for linux and darwin, amd64 and arm64, into dist/
	@mkdir -p $(DIST)
	@set -e; for p in $(DIST_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "build $(DIST)/computeplane-fn-$$os-$$arch"; \
		env $(DIST_ENV) GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(DIST_LDFLAGS)' \
			-o $(DIST)/computeplane-fn-$$os-$$arch ./cmd/computeplane-fn; \
	done

.PHONY: release-tool
release-tool: ## Build bin/release (SBOM, image, checksums) from the tools/release module
	cd tools/release && $(GO) build -o $(RELEASE_TOOL) ./cmd/release

.PHONY: dist
dist: dist-bin release-tool ## Release binaries, their SBOM (CycloneDX JSON, from the binaries' build info), the config's JSON Schema, the baseline chart (archive and OCI layout) and SHA256SUMS in dist/
	cp pkg/api/computeplanegenerator.schema.json $(DIST)/computeplanegenerator.schema.json
	$(RELEASE_TOOL) sbom -version '$(VERSION)' -commit '$(COMMIT)' -source $(IMAGE_SOURCE) \
		-licenses '$(LICENSES)' -source-date-epoch $(SOURCE_DATE_EPOCH) -o $(DIST)/computeplane-fn.cdx.json \
		$(foreach p,$(DIST_PLATFORMS),$(DIST)/computeplane-fn-$(subst /,-,$(p)))
	$(RELEASE_TOOL) chart -dir charts/computeplane-baseline -source-date-epoch $(SOURCE_DATE_EPOCH) -o $(DIST)
	$(RELEASE_TOOL) checksums $(DIST)

.PHONY: image
image: dist ## The function's image (linux/amd64, linux/arm64): docker-archive tarballs and an OCI layout in dist/
	$(RELEASE_TOOL) image -repo $(IMAGE_REPO) -version '$(VERSION)' -commit '$(COMMIT)' \
		-source $(IMAGE_SOURCE) -licenses '$(LICENSES)' -source-date-epoch $(SOURCE_DATE_EPOCH) \
		$(foreach p,$(IMAGE_PLATFORMS),-binary $(p)=$(DIST)/computeplane-fn-$(subst /,-,$(p))) -o $(DIST)
	$(RELEASE_TOOL) checksums $(DIST)

.PHONY: dist-test
dist-test: tools build image ## make dist image, then test what they made (static, reproducible, image, SBOM, checksums); slow
	cd tools/release && $(GO) vet ./...
	cd tools/release && DIST_DIR=$(DIST) PROJECT_DIR=$(CURDIR) KUSTOMIZE=$(KUSTOMIZE) \
		RELEASE_VERSION='$(VERSION)' RELEASE_COMMIT='$(COMMIT)' SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
		IMAGE_REPO=$(IMAGE_REPO) IMAGE_SOURCE=$(IMAGE_SOURCE) LICENSES='$(LICENSES)' \
		$(GO) test -count=1 -timeout 40m ./...
