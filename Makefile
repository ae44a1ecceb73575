# retrace: the two commands are `make run` and `make test`; both set up the
# machine first (Chromium, Node.js, ffmpeg, the Playwright driver) when needed.

GO      ?= go
BIN     := bin/retrace
PORT    ?= 8931
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT     := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get

.PHONY: all build setup system-deps run test test-clients bench bench-soak bench-load vet clean eval

all: build

build:
	$(GO) build -o $(BIN) .

# Debian packages when missing, then the Playwright driver (from npm).
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
		echo "setup: installing chromium (apt-get)" >&2; \
		$(APT) update -qq && $(APT) install -y -qq chromium >/dev/null; \
	fi
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
		echo "setup: installing nodejs and npm (apt-get)" >&2; \
		$(APT) update -qq && $(APT) install -y -qq nodejs npm >/dev/null; \
	fi
	@if ! command -v ffmpeg >/dev/null 2>&1; then \
		echo "setup: installing ffmpeg (apt-get), for --save-video" >&2; \
		$(APT) update -qq && $(APT) install -y -qq --no-install-recommends ffmpeg >/dev/null; \
	fi
	@if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then \
		echo "setup: installing nginx (apt-get), for the reverse-proxy test (docs/deploy.md)" >&2; \
		$(APT) update -qq && $(APT) install -y -qq nginx >/dev/null; \
	fi

setup: system-deps build
	$(BIN) install

# Serve Streamable HTTP at http://127.0.0.1:$(PORT)/mcp.
run: setup
	$(BIN) --port $(PORT)

# The full suite, against real Chromium, then each fuzz target for a few
# seconds (docs/fuzzing.md).
test: setup
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	$(call fuzz-each,3s,scratch)

# The fuzz targets, package:name; `go test ./...` runs their seed corpora.
FUZZ_TARGETS := refs:FuzzLookup llmerr:FuzzClassify \
	roles:FuzzLoad roles:FuzzAddFlag roles:FuzzCheckAuthFile \
	server:FuzzDecodeArgs server:FuzzNormalizeURL server:FuzzOriginCheck \
	server:FuzzNormalizeKey server:FuzzCheckLine server:FuzzLineReader
FUZZTIME ?= 60s
FUZZCACHE ?=

# fuzz-each runs every target for $(1), one at a time (-fuzz takes one
# target). Each package's test binary is built once, instrumented, and run
# in its directory, so a failing input lands in its testdata/fuzz/. Inputs
# found interesting go to go's own fuzz cache, as with `go test -fuzz`, or
# to a scratch one when $(2) is "scratch": then each target starts from its
# seeds alone and the run costs the same every time.
define fuzz-each
@set -e; bin=$$(mktemp -d); trap 'rm -rf "$$bin"' EXIT; \
cache=$(if $(filter scratch,$(2)),"$$bin/cache",$$($(GO) env GOCACHE)/fuzz/$$($(GO) list -m)); \
for t in $(FUZZ_TARGETS); do \
	pkg=$${t%%:*}; name=$${t#*:}; \
	[ -x "$$bin/$$pkg.test" ] || $(GO) test -c -vet=off -fuzz . -o "$$bin/$$pkg.test" ./$$pkg; \
	echo "fuzz: $$name ($$pkg, $(1))"; \
	(cd $$pkg && "$$bin/$$pkg.test" -test.run '^$$' -test.fuzz "^$$name\$$" -test.fuzztime $(1) \
		-test.fuzzcachedir "$$cache/$$pkg"); \
done
endef

# Each fuzz target for FUZZTIME (60s by default: about 12 minutes);
# FUZZCACHE=scratch starts from the seeds, as make test does.
.PHONY: fuzz
fuzz:
	$(call fuzz-each,$(FUZZTIME),$(FUZZCACHE))

# Drives the built binary with a client nobody here wrote (MCP Inspector CLI),
# and runs the Playwright tests it generates with Playwright's own runner.
test-clients: setup
	RETRACE_TEST_CLIENTS=1 $(GO) test -count=1 -run 'TestInspectorCLI|TestGeneratedTestRuns' -v .

vet:
	$(GO) vet ./...
	gofmt -l .

clean:
	rm -rf bin

# Side-by-side comparison with playwright-mcp (installed from npm on first
# use): the scripted tasks, then the page figures; writes docs/benchmarks.md
# (go run ./bench -tasks-only -out docs/benchmarks.md for the tasks alone).
# Not part of make test.
bench: setup
	$(GO) run ./bench -out docs/benchmarks.md

# One long session against bin/retrace: 1,000 navigate → snapshot → click
# cycles, memory and latency every 50; writes the Soak section of
# docs/reliability.md and docs/soak-rss.svg. Not part of make test.
bench-soak: setup
	$(GO) run ./bench/soak -cycles 2000 -warmup 1000 -out docs/reliability.md -chart docs/soak-rss.svg

# Concurrent MCP sessions over HTTP (1, 4, 8 and 16, 30 s each) on retrace
# with a local Chromium, retrace on two Playwright browser servers and
# playwright-mcp, plus memory per idle session and per tab; writes the Load
# section of docs/benchmarks.md. About 10 minutes. Not part of make test.
bench-load: setup
	$(GO) run ./bench/load -out docs/benchmarks.md

# The recovery-rate evaluation (docs/eval.md); EVAL_OUT is where the report goes.
EVAL_OUT ?= eval-out
eval: setup
	bin/retrace eval --out $(EVAL_OUT)

# The same scenarios on retrace, playwright-mcp and chrome-devtools-mcp side
# by side (docs/eval.md, "Other servers"). The peers are installed from npm at
# pinned releases into PEERS on first use. Not part of make test.
PEERS      ?= $(HOME)/.cache/retrace/peers
PW_MCP     := 0.0.83
CDT_MCP    := 1.11.0
CHROMIUM   := $(shell command -v chromium || command -v chromium-browser)
PW_MCP_CLI := $(PEERS)/playwright-mcp-$(PW_MCP)/node_modules/@playwright/mcp/cli.js
CDT_CLI    := $(PEERS)/chrome-devtools-mcp-$(CDT_MCP)/node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js
EVAL_COMPARE_FLAGS ?= --policies generic,reader
.PHONY: eval-compare
eval-compare: setup
	@[ -f $(PW_MCP_CLI) ] || npm install --silent --no-audit --no-fund --prefix $(PEERS)/playwright-mcp-$(PW_MCP) @playwright/mcp@$(PW_MCP)
	@[ -f $(CDT_CLI) ] || npm install --silent --no-audit --no-fund --prefix $(PEERS)/chrome-devtools-mcp-$(CDT_MCP) chrome-devtools-mcp@$(CDT_MCP)
	bin/retrace eval --out $(EVAL_OUT) $(EVAL_COMPARE_FLAGS) \
		--server retrace=$(CURDIR)/$(BIN) \
		--server playwright-mcp="node $(PW_MCP_CLI) --headless --isolated --no-sandbox --executable-path $(CHROMIUM) --timeout-action 1500 --timeout-navigation 2000" \
		--server chrome-devtools-mcp="node $(CDT_CLI) --headless --isolated --no-page-id-routing --no-usage-statistics --no-performance-crux --executablePath $(CHROMIUM) --chromeArg=--no-sandbox"
