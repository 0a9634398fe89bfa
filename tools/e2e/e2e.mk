# The real-control-plane suite (make e2e): the components it starts, built from
# their Go modules into bin/e2e/ once per version, and the suite itself
# (e2e/cluster, a module of its own so that `make test` never runs it).
# Included by the Makefile.

# The components are built once per version into a cache outside the
# checkout, so that every clone on a machine (CI's included) shares them;
# E2E_CACHE or E2E_BIN override it.
E2E_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/computeplane-fn/e2e
E2E_BIN ?= $(E2E_CACHE)/bin
E2E_WORK := $(E2E_CACHE)/work
E2E_GO_BUILD = GO=$(GO) $(CURDIR)/tools/e2e/gobuild.sh
# Every component's name carries its version (or a digest of its sources),
# and its rule's prerequisites are order-only: a binary in E2E_BIN is reused
# as it is, whatever the age of a clone's files, so that a second clone
# builds nothing. A change of a module under tools/e2e comes with a change
# of the version it builds.
THIRD_PARTY ?= $(CURDIR)/../shared/third_party

# Versions. Each binary's name carries its version, so changing one rebuilds
# only that component; the tools/e2e/<component>/go.mod files pin the same.
ETCD_VERSION := v3.6.16
KUBE_VERSION := v1.36.3
# The Cozystack layouts run on the oldest supported management cluster
# (README, "Supported platforms"): the 1.33 line, with Cozystack's own Flux.
KUBE_OLDEST_VERSION := v1.33.5
KUSTOMIZE_CONTROLLER_VERSION := v1.9.6
SOURCE_CONTROLLER_VERSION := v1.9.6
# helm-controller and source-watcher come from ../shared/third_party (the
# proxy does not serve them): keyed by a digest of those sources.
THIRD_PARTY_SUM = $(shell cd $(THIRD_PARTY) 2>/dev/null && find helm-controller source-watcher fluxcd-pkg-chartutil -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)

ETCD_BIN = $(E2E_BIN)/etcd-$(ETCD_VERSION)
KUBE_APISERVER_BIN = $(E2E_BIN)/kube-apiserver-$(KUBE_VERSION)
KUBE_APISERVER_OLDEST_BIN = $(E2E_BIN)/kube-apiserver-$(KUBE_OLDEST_VERSION)
KUBECTL_BIN = $(E2E_BIN)/kubectl-$(KUBE_VERSION)
KUSTOMIZE_CONTROLLER_BIN = $(E2E_BIN)/kustomize-controller-$(KUSTOMIZE_CONTROLLER_VERSION)
HELM_CONTROLLER_BIN = $(E2E_BIN)/helm-controller-$(THIRD_PARTY_SUM)
SOURCE_WATCHER_BIN = $(E2E_BIN)/source-watcher-$(THIRD_PARTY_SUM)
# Cozystack's shard operator and API server, from ../shared/third_party/cozystack
# (Cozystack at one commit): keyed by a digest of its Go sources.
COZYSTACK_SUM = $(shell cd $(THIRD_PARTY)/cozystack 2>/dev/null && find api cmd internal pkg go.mod go.sum -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
FLUX_SHARD_OPERATOR_BIN = $(E2E_BIN)/flux-shard-operator-$(COZYSTACK_SUM)
COZYSTACK_API_BIN = $(E2E_BIN)/cozystack-api-$(COZYSTACK_SUM)
# The Flux controllers Cozystack ships (../shared/third_party/cozystack-flux,
# one folder per controller and release tag): keyed by the tag and a digest
# of that folder.
COZYSTACK_FLUX = $(THIRD_PARTY)/cozystack-flux
cozystack_flux_sum = $(shell cd $(COZYSTACK_FLUX)/$(1) 2>/dev/null && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
COZY_HELM_CONTROLLER := helm-controller-v1.5.0
COZY_KUSTOMIZE_CONTROLLER := kustomize-controller-v1.8.0
COZY_SOURCE_WATCHER := source-watcher-v2.1.0
COZY_HELM_CONTROLLER_BIN = $(E2E_BIN)/cozystack-$(COZY_HELM_CONTROLLER)-$(call cozystack_flux_sum,$(COZY_HELM_CONTROLLER))
COZY_KUSTOMIZE_CONTROLLER_BIN = $(E2E_BIN)/cozystack-$(COZY_KUSTOMIZE_CONTROLLER)-$(call cozystack_flux_sum,$(COZY_KUSTOMIZE_CONTROLLER))
COZY_SOURCE_WATCHER_BIN = $(E2E_BIN)/cozystack-$(COZY_SOURCE_WATCHER)-$(call cozystack_flux_sum,$(COZY_SOURCE_WATCHER))

$(E2E_BIN)/etcd-$(ETCD_VERSION): | tools/e2e/etcd/go.mod tools/e2e/etcd/main.go
	cd tools/e2e/etcd && $(E2E_GO_BUILD) -o $@ .

$(E2E_BIN)/kube-apiserver-$(KUBE_VERSION): | tools/e2e/kube/go.mod
	cd tools/e2e/kube && $(E2E_GO_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(E2E_BIN)/kube-apiserver-$(KUBE_OLDEST_VERSION): | tools/e2e/kube133/go.mod
	cd tools/e2e/kube133 && GOFLAGS=-mod=mod $(E2E_GO_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(E2E_BIN)/kubectl-$(KUBE_VERSION): | tools/e2e/kube/go.mod
	cd tools/e2e/kube && $(E2E_GO_BUILD) -o $@ k8s.io/kubernetes/cmd/kubectl

$(E2E_BIN)/kustomize-controller-$(KUSTOMIZE_CONTROLLER_VERSION): | tools/e2e/kustomize-controller/go.mod
	cd tools/e2e/kustomize-controller && $(E2E_GO_BUILD) -o $@ github.com/fluxcd/kustomize-controller

# ../shared is read-only in CI: build from a copy, with helm-controller's
# chartutil replace pointing at the copy beside it.
$(E2E_BIN)/helm-controller-%:
	rm -rf $(E2E_WORK)/src/helm-controller $(E2E_WORK)/src/fluxcd-pkg-chartutil
	mkdir -p $(E2E_WORK)/src
	cp -r $(THIRD_PARTY)/helm-controller $(THIRD_PARTY)/fluxcd-pkg-chartutil $(E2E_WORK)/src/
	chmod -R u+w $(E2E_WORK)/src
	printf '\nreplace github.com/fluxcd/pkg/chartutil => ../fluxcd-pkg-chartutil\n' >> $(E2E_WORK)/src/helm-controller/go.mod
	cd $(E2E_WORK)/src/helm-controller && GOFLAGS='-mod=mod -buildvcs=false' $(E2E_GO_BUILD) -o $@ .

$(E2E_BIN)/source-watcher-%:
	rm -rf $(E2E_WORK)/src/source-watcher
	mkdir -p $(E2E_WORK)/src
	cp -r $(THIRD_PARTY)/source-watcher $(E2E_WORK)/src/
	chmod -R u+w $(E2E_WORK)/src
	cd $(E2E_WORK)/src/source-watcher && GOFLAGS='-mod=mod -buildvcs=false' $(E2E_GO_BUILD) -o $@ ./cmd

# Cozystack's Flux controllers, each from a writable copy of its folder:
# $(1) the folder, $(2) its main package, $(3) the binary.
cozystack_flux_build = rm -rf $(E2E_WORK)/src/cozystack-flux/$(1) && mkdir -p $(E2E_WORK)/src/cozystack-flux && \
	cp -r $(COZYSTACK_FLUX)/$(1) $(E2E_WORK)/src/cozystack-flux/ && chmod -R u+w $(E2E_WORK)/src/cozystack-flux/$(1) && \
	cd $(E2E_WORK)/src/cozystack-flux/$(1) && GOFLAGS='-mod=mod -buildvcs=false' $(E2E_GO_BUILD) -o $(3) $(2)

$(E2E_BIN)/cozystack-$(COZY_HELM_CONTROLLER)-%:
	$(call cozystack_flux_build,$(COZY_HELM_CONTROLLER),.,$@)

$(E2E_BIN)/cozystack-$(COZY_KUSTOMIZE_CONTROLLER)-%:
	$(call cozystack_flux_build,$(COZY_KUSTOMIZE_CONTROLLER),.,$@)

$(E2E_BIN)/cozystack-$(COZY_SOURCE_WATCHER)-%:
	$(call cozystack_flux_build,$(COZY_SOURCE_WATCHER),./cmd,$@)

# Both build from one copy, made by the first that needs it (keyed by the
# same digest), one after the other even under make -j (the order-only
# prerequisite): each takes both cores. Like helm-controller's, the rules
# have no prerequisite files: a binary in E2E_BIN is reused as it is.
cozystack_copy = test -f $(E2E_WORK)/src/cozystack-$(1)/go.mod || { \
	rm -rf $(E2E_WORK)/src/cozystack-* && mkdir -p $(E2E_WORK)/src/cozystack-$(1) && \
	cp -r $(THIRD_PARTY)/cozystack/. $(E2E_WORK)/src/cozystack-$(1)/ && chmod -R u+w $(E2E_WORK)/src/cozystack-$(1); }

$(E2E_BIN)/flux-shard-operator-%:
	$(call cozystack_copy,$*)
	cd $(E2E_WORK)/src/cozystack-$* && GOFLAGS='-mod=mod -buildvcs=false' $(E2E_GO_BUILD) -o $@ ./cmd/flux-shard-operator

$(E2E_BIN)/cozystack-api-%: | $(E2E_BIN)/flux-shard-operator-%
	$(call cozystack_copy,$*)
	cd $(E2E_WORK)/src/cozystack-$* && GOFLAGS='-mod=mod -buildvcs=false' $(E2E_GO_BUILD) -o $@ ./cmd/cozystack-api

.PHONY: e2e-tools
e2e-tools: ## Build the components of the real-control-plane suite into E2E_BIN (a cache outside the checkout), once per version, saying how long each took
	@test -d $(THIRD_PARTY) || { echo "e2e: $(THIRD_PARTY) is missing (helm-controller and source-watcher are built from it)"; exit 1; }
	@echo "e2e components: $(E2E_BIN)"
	@$(MAKE) --no-print-directory $(ETCD_BIN) $(KUBE_APISERVER_BIN) $(KUBECTL_BIN) $(KUSTOMIZE_CONTROLLER_BIN) $(HELM_CONTROLLER_BIN) $(SOURCE_WATCHER_BIN) \
		$(FLUX_SHARD_OPERATOR_BIN) $(COZYSTACK_API_BIN) \
		$(KUBE_APISERVER_OLDEST_BIN) $(COZY_HELM_CONTROLLER_BIN) $(COZY_KUSTOMIZE_CONTROLLER_BIN) $(COZY_SOURCE_WATCHER_BIN)

E2E_TIMEOUT ?= 45m
E2E_RUN ?= .
E2E_TESTFLAGS ?=
# A seed: the stages of each layout run in an order it permutes (docs/e2e.md,
# "Every stage on its own"); empty, in the suite's order.
E2E_SHUFFLE ?=

# The components, by the environment variables the suite reads.
E2E_ENV = E2E_ETCD=$(ETCD_BIN) E2E_KUBE_APISERVER=$(KUBE_APISERVER_BIN) E2E_KUBECTL=$(KUBECTL_BIN) \
	E2E_KUSTOMIZE_CONTROLLER=$(KUSTOMIZE_CONTROLLER_BIN) E2E_HELM_CONTROLLER=$(HELM_CONTROLLER_BIN) \
	E2E_SOURCE_WATCHER=$(SOURCE_WATCHER_BIN) E2E_FLUX_SHARD_OPERATOR=$(FLUX_SHARD_OPERATOR_BIN) \
	E2E_COZYSTACK_API=$(COZYSTACK_API_BIN) E2E_THIRD_PARTY=$(THIRD_PARTY) E2E_COMPUTEPLANE_FN=$(BIN)/computeplane-fn \
	E2E_KUBE_APISERVER_OLDEST=$(KUBE_APISERVER_OLDEST_BIN) E2E_COZY_HELM_CONTROLLER=$(COZY_HELM_CONTROLLER_BIN) \
	E2E_COZY_KUSTOMIZE_CONTROLLER=$(COZY_KUSTOMIZE_CONTROLLER_BIN) E2E_COZY_SOURCE_WATCHER=$(COZY_SOURCE_WATCHER_BIN) \
	E2E_COZY_FLUX_DIR=$(COZYSTACK_FLUX) E2E_COZY_HELM_CONTROLLER_DIR=$(COZY_HELM_CONTROLLER) \
	E2E_COZY_KUSTOMIZE_CONTROLLER_DIR=$(COZY_KUSTOMIZE_CONTROLLER) E2E_COZY_SOURCE_WATCHER_DIR=$(COZY_SOURCE_WATCHER) \
	E2E_SOURCE_CONTROLLER_DIR=$$(cd $(CURDIR)/tools/e2e/kustomize-controller && $(GO) mod download -json github.com/fluxcd/source-controller@$(SOURCE_CONTROLLER_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')

.PHONY: e2e
e2e: tools build e2e-tools ## Run the real-control-plane suite (etcd, kube-apiserver, Flux's controllers) in e2e/cluster
	cd e2e/cluster && $(GO) vet ./...
	cd e2e/cluster && $(E2E_ENV) E2E_SHUFFLE='$(E2E_SHUFFLE)' \
	$(GO) test -count=1 $(E2E_TESTFLAGS) -timeout $(E2E_TIMEOUT) -run '$(E2E_RUN)' ./...

# The GitOps side's cost (docs/performance.md, "The GitOps side"): the
# generated fleet of make bench at each size, reconciled by the real
# kustomize-controller; a table of times and write requests. Not part of
# make e2e (TestFleetCost skips without E2E_BENCH) nor of make test. It
# builds only the components it runs (helm-controller and flux-shard-operator
# only for the helm side, E2E_BENCH_HELM).
E2E_BENCH_TENANTS ?= 100 1000
E2E_BENCH_TIMEOUT ?= 240m
# spec.fleet.unitSource of the fleet, named in its config: FleetSource (the
# bench's default, as its earlier readings were taken) or ExternalArtifact
# (kustomize-controller then runs with the gate Cozystack sets).
# The Flux layout of the bench: Cozystack (its controllers as one account in
# cozy-fluxcd) or FluxInstall (stock Flux, each controller its own account in
# flux-system).
E2E_BENCH_LAYOUT ?= Cozystack
# kustomize-controller's --requeue-dependency in the bench: Cozystack's 30s
# (fluxcd.yaml at 3c780acd); the suite's 2s was the bench's before.
E2E_BENCH_REQUEUE_DEPENDENCY ?= 30s
E2E_BENCH_UNIT_SOURCE ?= FleetSource
# spec.fleet.shards of the fleet: 1 (the default: no shard label, one
# kustomize-controller) or N > 1, and then N shard kustomize-controllers
# (--watch-label-selector=sharding.fluxcd.io/key in (shard<i>)) beside the main
# one; the tables show each controller's Kustomizations, reconciles and CPU.
E2E_BENCH_SHARDS ?= 1
# The platform: oldest (kube-apiserver v1.33.5 and the controllers Cozystack
# ships, as the suite's Cozystack mode) or newest (v1.36.3 and current Flux).
E2E_BENCH_PLATFORM ?= oldest
# The helm side (docs/performance.md, "The helm side"): 1 (the default) runs
# helm-controller beside flux-shard-operator and its two shards once the
# GitOps side is measured, installs every release of the fleet (each
# ComputePlane at a loopback address of its own) and reports its time, CPU
# per release, memory and ComputePlanes per shard, each shard's share and what
# E2E_BENCH_HELM_RECONCILES forced reconciles of every release (1) write;
# 0 measures the GitOps side alone, as before.
E2E_BENCH_HELM ?= 1
E2E_BENCH_HELM_RECONCILES ?= 1
ifeq ($(E2E_BENCH_PLATFORM),newest)
E2E_BENCH_BINS = $(KUBE_APISERVER_BIN) $(KUSTOMIZE_CONTROLLER_BIN) $(SOURCE_WATCHER_BIN)
E2E_BENCH_HELM_BINS = $(HELM_CONTROLLER_BIN) $(FLUX_SHARD_OPERATOR_BIN)
else
E2E_BENCH_BINS = $(KUBE_APISERVER_OLDEST_BIN) $(COZY_KUSTOMIZE_CONTROLLER_BIN) $(COZY_SOURCE_WATCHER_BIN)
E2E_BENCH_HELM_BINS = $(COZY_HELM_CONTROLLER_BIN) $(FLUX_SHARD_OPERATOR_BIN)
endif
ifneq ($(E2E_BENCH_HELM),0)
E2E_BENCH_BINS += $(E2E_BENCH_HELM_BINS)
endif

.PHONY: e2e-bench
e2e-bench: build $(ETCD_BIN) $(E2E_BENCH_BINS) ## Measure the GitOps side at E2E_BENCH_TENANTS tenants (default: 100 1000) on E2E_BENCH_PLATFORM (oldest, newest): root to all Ready, writes per reconcile; then the helm side (E2E_BENCH_HELM=1, the default): every release installed, CPU per release, memory and ComputePlanes per shard, what a forced reconcile writes
	$(GO) build -o $(BIN)/fleetgen ./internal/testkit/fleetgen/cmd/fleetgen
	cd e2e/cluster && $(GO) vet ./...
	cd e2e/cluster && $(E2E_ENV) E2E_BENCH=1 E2E_FLEETGEN=$(BIN)/fleetgen E2E_BENCH_TENANTS='$(E2E_BENCH_TENANTS)' E2E_BENCH_UNIT_SOURCE='$(E2E_BENCH_UNIT_SOURCE)' E2E_BENCH_REQUEUE_DEPENDENCY='$(E2E_BENCH_REQUEUE_DEPENDENCY)' E2E_BENCH_SHARDS='$(E2E_BENCH_SHARDS)' E2E_BENCH_PLATFORM='$(E2E_BENCH_PLATFORM)' E2E_BENCH_LAYOUT='$(E2E_BENCH_LAYOUT)' E2E_BENCH_HELM='$(E2E_BENCH_HELM)' E2E_BENCH_HELM_RECONCILES='$(E2E_BENCH_HELM_RECONCILES)' \
	$(GO) test -count=1 -v $(E2E_TESTFLAGS) -timeout $(E2E_BENCH_TIMEOUT) -run '^TestFleetCost$$' .
