# docsmith — run `make help` for the targets.

GO            ?= go
BIN           := bin/docsmith
CACHE         := $(CURDIR)/.cache
GOLANGCI_LINT := $(CACHE)/bin/golangci-lint
GOLANGCI_VERSION := v2.15.0
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT        ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS       := -s -w -X github.com/docsmith/docsmith/internal/cli.Version=$(VERSION) -X github.com/docsmith/docsmith/internal/cli.Commit=$(COMMIT)

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/docsmith
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/docsmith

DIST            := dist
RELEASE_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64

# One static binary per target, named docsmith-VERSION-OS-ARCH[.exe], and
# their checksums in sha256sum's format (cd dist && sha256sum -c SHA256SUMS).
.PHONY: release
release: ## Cross-compile static binaries for linux, darwin and windows into dist/, with dist/SHA256SUMS
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@for t in $(RELEASE_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; ext=; [ "$$os" = windows ] && ext=.exe; \
		echo "release: $(DIST)/docsmith-$(VERSION)-$$os-$$arch$$ext"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
			-o $(DIST)/docsmith-$(VERSION)-$$os-$$arch$$ext ./cmd/docsmith || exit 1; \
	done
	@cd $(DIST) && sha256sum docsmith-* > SHA256SUMS && cat SHA256SUMS

# What CI can afford: the release of the host's target only, its checksum,
# and the binary's own account of its version, commit and build.
.PHONY: release-check
release-check: ## Build the host's release binary into dist/ and check its SHA256SUMS line, version, commit and static build
	@$(MAKE) --no-print-directory release RELEASE_TARGETS=$$($(GO) env GOOS)/$$($(GO) env GOARCH)
	./scripts/release-check.sh $(DIST) $(VERSION) $(COMMIT)

.PHONY: run
run: build ## Serve on 127.0.0.1:8080 with SQLite in ./data (prints demo keys on first start)
	./$(BIN) serve

IMAGE      ?= docsmith:local
BASE_IMAGE ?= debian:bookworm-slim

# The base image comes from a registry when one answers, else it is made
# from Debian's packages (debootstrap, as root).
.PHONY: image
image: build ## Build the container image $(IMAGE) from bin/docsmith (makes the base image if missing) and print its size
	@docker image inspect $(BASE_IMAGE) >/dev/null 2>&1 || docker pull -q $(BASE_IMAGE) 2>/dev/null || ./scripts/debian-base-image.sh $(BASE_IMAGE)
	docker build --build-arg BASE_IMAGE=$(BASE_IMAGE) --build-arg VERSION=$(VERSION) -t $(IMAGE) .
	@docker image inspect -f '{{.Size}}' $(IMAGE) | awk '{ printf "$(IMAGE): %.0f MB\n", $$1 / 1e6 }'

.PHONY: image-test
image-test: image ## Run the image on a fresh volume: health check, an assistant answer, a builtin job, a clean stop
	IMAGE=$(IMAGE) ./scripts/image-test.sh

.PHONY: docs
docs: ## Regenerate docs/'s configuration and API reference pages from the config table and the OpenAPI document
	$(GO) run ./internal/docsite/gen docs

.PHONY: gitea
gitea: ## Build the Gitea server the forge tests run against (once, cached)
	@./scripts/build-gitea.sh >/dev/null

AISDK_DIR   := clients/aisdk
AISDK_STAMP := $(AISDK_DIR)/node_modules/.installed

.PHONY: aisdk-clients
aisdk-clients: $(AISDK_STAMP) ## Install the AI SDK chat clients the assistant tests drive (npm ci in clients/aisdk, once)

# Reinstalled only when package.json or the lock file changed. Without npm
# the install is skipped (and TestAISDKClients with it), except in CI.
$(AISDK_STAMP): $(AISDK_DIR)/package.json $(AISDK_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(AISDK_DIR) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	elif [ -n "$$CI" ] && [ "$$CI" != false ]; then \
		echo "npm is needed to install the AI SDK clients in $(AISDK_DIR)"; exit 1; \
	else \
		echo "npm not found: the AI SDK client tests will be skipped"; \
	fi

WIDGET_DIR := web/widget
WIDGET_OUT := internal/widget/dist/widget.js

.PHONY: widget
widget: ## Rebuild the chat widget bundle (internal/widget/dist) from web/widget and its lock file
	cd $(WIDGET_DIR) && npm ci --no-audit --no-fund --loglevel=error && npm run build

# Builds the widget again into a scratch directory and compares it with the
# committed bundle, byte for byte: the committed file must be what its
# sources and lock file give.
.PHONY: widget-check
widget-check: ## Check that the committed widget bundle is what a rebuild from the lock file gives
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	cd $(WIDGET_DIR) && npm ci --no-audit --no-fund --loglevel=error && npx --no-install tsc --noEmit && \
	npx --no-install vite build --logLevel warn --outDir "$$tmp" --emptyOutDir && \
	if cmp -s "$$tmp/widget.js" $(CURDIR)/$(WIDGET_OUT); then \
		echo "widget-check: $(WIDGET_OUT) matches a rebuild"; \
	else \
		echo "widget-check: $(WIDGET_OUT) differs from a rebuild of $(WIDGET_DIR); run 'make widget' and commit the result"; exit 1; \
	fi

BROWSER_DIR   := clients/browser
BROWSER_STAMP := $(BROWSER_DIR)/node_modules/.installed

# The browser tests drive Debian's chromium (never a downloaded build) with
# playwright-core. As root, a missing chromium is installed with apt-get; in
# CI a browser that cannot be installed is an error; elsewhere the browser
# tests skip and say why.
.PHONY: browser-deps
browser-deps: $(BROWSER_STAMP) ## Install chromium (apt-get, as root) and playwright-core (npm ci in clients/browser) for the browser tests
	@if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	elif [ -n "$$CI" ] && [ "$$CI" != false ]; then \
		echo "chromium is needed for the browser tests: apt-get install chromium (as root)"; exit 1; \
	else \
		echo "chromium not found (apt-get install chromium): the browser tests will be skipped"; \
	fi

$(BROWSER_STAMP): $(BROWSER_DIR)/package.json $(BROWSER_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	elif [ -n "$$CI" ] && [ "$$CI" != false ]; then \
		echo "npm is needed to install playwright-core in $(BROWSER_DIR)"; exit 1; \
	else \
		echo "npm not found: the browser tests will be skipped"; \
	fi

MCP_CLIENT_DIR   := clients/mcp
MCP_CLIENT_STAMP := $(MCP_CLIENT_DIR)/node_modules/.installed

.PHONY: mcp-client
mcp-client: $(MCP_CLIENT_STAMP) ## Install the TypeScript MCP client the MCP tests drive (npm ci in clients/mcp, once)

# As for the AI SDK clients: reinstalled when package.json or the lock file
# changed; without npm skipped (and TestMCPTypeScriptClient with it), except in CI.
$(MCP_CLIENT_STAMP): $(MCP_CLIENT_DIR)/package.json $(MCP_CLIENT_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(MCP_CLIENT_DIR) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	elif [ -n "$$CI" ] && [ "$$CI" != false ]; then \
		echo "npm is needed to install the MCP client in $(MCP_CLIENT_DIR)"; exit 1; \
	else \
		echo "npm not found: the TypeScript MCP client test will be skipped"; \
	fi

# The PostgreSQL and Redis tests (scale-out) run when these name a server,
# and fail if it does not answer; .ci/run sets them. Unset, they are skipped.
#   DOCSMITH_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable
#   DOCSMITH_TEST_REDIS_URL=redis://127.0.0.1:6379/0

.PHONY: test
test: gitea aisdk-clients browser-deps mcp-client ## Run every test (what CI runs); PostgreSQL and Redis ones need DOCSMITH_TEST_DATABASE_URL and DOCSMITH_TEST_REDIS_URL
	DOCSMITH_GITEA_BIN="$$(./scripts/build-gitea.sh)" $(GO) test -race -count=1 ./...

.PHONY: test-short
test-short: ## Run the quick tests only (no Gitea)
	$(GO) test -short -count=1 ./...

.PHONY: fuzz
fuzz: ## Fuzz every parser of outside input for a short while each (FUZZTIME=10s, RUN=regexp of target names)
	FUZZTIME=$(or $(FUZZTIME),10s) RUN='$(or $(RUN),.)' ./scripts/fuzz.sh

CORPORA ?= ../shared/corpora

.PHONY: bench
bench: ## Job create+get over HTTP at 32 clients and assistant retrieval latency, SQLite against PostgreSQL (with the DOCSMITH_TEST_* servers)
	$(GO) test ./internal/app -run '^$$' -bench BenchmarkJobCreateGet -benchtime 5000x
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/store/postgres -run '^$$' -bench SearchRetrieve -benchtime 2000x

PEERS ?= ../shared/tools/peers

.PHONY: bench-compare
bench-compare: ## Assistant at C=100 beside the Node AI SDK server and the floor server (PEERS=dir of the peers, default ../shared/tools/peers)
	PEERS=$(PEERS) ./scripts/bench-compare.sh

.PHONY: bench-cold
bench-cold: ## First search after a server start on a large docs site, SQLite and PostgreSQL (with DOCSMITH_TEST_DATABASE_URL); the index's heap
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/app -run '^$$' -bench ColdStart -benchtime 10x
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/store/postgres -run '^$$' -bench 'SearchRetrieve/memory' -benchtime 200x

.PHONY: bench-index
bench-index: ## docsmith index of a large docs site from a folder and from a git repository (first build, again, after a one-page commit); a server's incremental update after a one-page commit against a full build (time, files read, pages cut, heap)
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/app -run '^$$' -bench IndexBuild -benchtime 10x
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/indexer -run '^$$' -bench IndexUpdate -benchtime 5x

.PHONY: bench-agent
bench-agent: gitea ## A turn's non-model cost against plain git + curl, on a medium docs site in a real Gitea
	DOCSMITH_GITEA_BIN="$$(./scripts/build-gitea.sh)" DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/hoppscotch \
		$(GO) test ./internal/agentrun -run '^$$' -bench TurnAgainstPlainGit -benchtime 10x

.PHONY: bench-dashboard
bench-dashboard: ## Dashboard page render time p50/p99 (jobs and conversations lists) with 10,000 jobs and 100,000 assistant turns, SQLite and PostgreSQL (with DOCSMITH_TEST_DATABASE_URL)
	$(GO) test ./internal/dashboard -run '^$$' -bench BenchmarkPages -benchtime 200x

.PHONY: bench-assistant
bench-assistant: ## Index build, retrieval latency, and 100 concurrent assistant streams on a large docs site
	$(GO) test ./internal/store/sqlite -run '^$$' -bench 'BenchmarkSearch' -benchtime 3x
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/app -run '^$$' -bench AssistantStreams -benchtime 500x

.PHONY: bench-freshness
bench-freshness: gitea ## Time from a push to search, MCP and llms-full.txt serving it, through the push webhook and through a 1s poll, on a real Gitea
	DOCSMITH_GITEA_BIN="$$(./scripts/build-gitea.sh)" $(GO) test ./internal/app -run '^$$' -bench PushToServed -benchtime 10x

.PHONY: bench-mcp
bench-mcp: ## MCP search latency (p50, p99) from the Go SDK client to a running server, on a large docs site
	DOCSMITH_BENCH_SITE=$(abspath $(CORPORA))/mintlify $(GO) test ./internal/app -run '^$$' -bench MCPSearch -benchtime 2000x

# The scale-out topology of compose.yaml: PostgreSQL, Redis, migrate, two API
# replicas and a worker behind one port (docs/operations/compose.mdx).
.PHONY: compose-up
compose-up: ## Bring up compose.yaml's topology on port 8080 (needs the docsmith:local image; writes the secrets once)
	./scripts/compose-secrets.sh
	@if docker compose version >/dev/null 2>&1; then docker compose up --detach; else docker-compose up --detach; fi
	@echo 'the keys are in: docker compose logs setup (or docker-compose logs setup)'

.PHONY: compose-test
compose-test: ## Build the images, bring up compose.yaml under a project of its own, stop an API replica mid-job, check the job completes; tear down
	./scripts/compose-test.sh

$(GOLANGCI_LINT):
	GOBIN=$(CACHE)/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## gofmt, go vet and golangci-lint
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: run gofmt -w on the files above'; exit 1; }
	$(GO) vet ./...
	@$(GO) mod tidy -diff >/dev/null || { $(GO) mod tidy -diff; echo 'go.mod or go.sum is not tidy: run go mod tidy'; exit 1; }
	$(GOLANGCI_LINT) run ./...

.PHONY: clean
clean: ## Remove build output (keeps ./data)
	rm -rf bin $(DIST)
