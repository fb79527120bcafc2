# Decoy's everyday commands. CI (.ci/run) calls the same ones.
GO          ?= go
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK ?= $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.1.4
GOVULNDB    ?= https://vuln.go.dev
FUZZTIME    ?= 30s

# Every fuzz target, as package:Target.
FUZZ_TARGETS = \
	./jsondoc:FuzzParse ./jsondoc:FuzzResolve ./jsondoc:FuzzCompareDecimal \
	./query:FuzzCompile ./query:FuzzRunMatchesReference ./query:FuzzConditionsMatchReference \
	./server:FuzzQuery ./server:FuzzHandler ./server:FuzzWrites ./password:FuzzParsePHC ./admin:FuzzParseBody ./transport:FuzzRewrite \
	./studio:FuzzParseCookie ./studio:FuzzCheckCSRF ./generate:FuzzParse ./generate:FuzzSchemaValidates \
	./importer:FuzzOpenAPI ./importer:FuzzJSONServer ./importer:FuzzDetectReader ./importer:FuzzReadExport ./importer:FuzzSpoolExport \
	./route:FuzzMatch ./route:FuzzParse ./mergepatch:FuzzApply .:FuzzJournalEntryJSON .:FuzzJournalRecord ./rule:FuzzRequestConditions \
	./mockcache:FuzzLive ./upstream:FuzzParseBase ./upstream:FuzzDotSegments ./redis:FuzzJournalEntries

.PHONY: all build run test race lint vuln bench bench-go fuzz examples studio e2e

all: lint test

# Pure Go, as the release image (Dockerfile) builds it: with cgo
# the system's libc is loaded, and an idle Decoy holds 2–3.5 MiB more.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/decoy ./cmd/decoy

run:
	$(GO) run ./cmd/decoy serve --seed ./examples

# The test command of README.md.
test:
	$(GO) test ./...

race:
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

# Known vulnerabilities in the code paths Decoy uses. It needs the
# vulnerability database (GOVULNDB: vuln.go.dev, or a mirror or file:// copy).
vuln:
	$(GOVULNCHECK) -db $(GOVULNDB) ./...

# Decoy side by side with json-server, Mockoon and nginx (installs them in
# /tmp; see bench/README.md). Writes bench/results/.
bench:
	$(GO) run ./bench

# The Go benchmarks of each engine and read path.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS)

examples:
	$(GO) run ./internal/examplegen -out examples

# Rebuild Decoy Studio's bundle (studio/dist, committed) from studio/web.
studio:
	cd studio/web && npm ci --no-audit --no-fund && npm run build

# The Studio's browser tests alone (Debian's chromium; installs playwright-core).
e2e:
	cd studio/e2e && npm ci --no-audit --no-fund
	DECOY_TEST_BROWSER=1 $(GO) test -count=1 -run 'TestBrowser|TestDistMatchesSources' -v ./studio
