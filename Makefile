# retrace: the two commands are `make run` and `make test`; both set up the
# machine first (Chromium, Node.js, the Playwright driver) when needed.

GO      ?= go
BIN     := bin/retrace
PORT    ?= 8931
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT     := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get

.PHONY: all build setup system-deps run test test-clients bench vet clean eval

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

setup: system-deps build
	$(BIN) install

# Serve Streamable HTTP at http://127.0.0.1:$(PORT)/mcp.
run: setup
	$(BIN) --port $(PORT)

# The full suite, against real Chromium.
test: setup
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# Drives the built binary with a client nobody here wrote (MCP Inspector CLI).
test-clients: setup
	RETRACE_TEST_CLIENTS=1 $(GO) test -count=1 -run 'TestInspectorCLI' -v .

vet:
	$(GO) vet ./...
	gofmt -l .

clean:
	rm -rf bin

# Side-by-side comparison with playwright-mcp (installed from npm on first
# use); writes docs/benchmarks.md. Not part of make test.
bench: setup
	$(GO) run ./bench -out docs/benchmarks.md

# The recovery-rate evaluation (docs/eval.md); EVAL_OUT is where the report goes.
EVAL_OUT ?= eval-out
eval: setup
	bin/retrace eval --out $(EVAL_OUT)
