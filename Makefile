# batchd build, test and benchmark entry points. CI runs `make test` exactly
# as the README says (see .ci/run).
GO      ?= go
PREFIX  ?= /usr/local
DESTDIR ?=
BIN     := bin/batchd

.PHONY: build test bench fuzz vet install clean

build:
	$(GO) build -o $(BIN) ./cmd/batchd

## test: vet, the whole suite with the race detector (the real-sshd
## integration tests fail, never skip, when sshd is missing), and the
## systemd unit's verify and security score (at most 2.0).
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...
	./.ci/systemd-check

## bench: the benchmarks recorded in docs/benchmarks.md. Ingest and submit
## run once each at full size (100 s of it is the rate-limited submit), the
## reconcile of 100k checks runs as real processes, and every other
## package's benchmarks run as usual. About 8 minutes.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $$($(GO) list ./... | grep -v -x -e '.*/internal/ingest' -e '.*/internal/submit')
	$(GO) test -run '^$$' -bench 'Ingest' -benchtime 1x -benchmem -timeout 30m ./internal/ingest -ingest.rows 1000000
	$(GO) run ./tools/benchingest -rows 1000000 -mode gocsv
	$(GO) run ./tools/benchingest -rows 1000000 -mode ingest
	$(GO) test -run '^$$' -bench 'Submit' -benchtime 1x -timeout 30m ./internal/submit -submit.limited.creates 20000
	./tools/bench-reconcile.sh

## fuzz: a short run of every fuzz target beyond its seed corpus.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s $$pkg || exit 1; \
	  done; \
	done

install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/batchd
	install -D -m 0644 systemd/batchd.service $(DESTDIR)/etc/systemd/system/batchd.service
	install -D -m 0644 configs/batchd.yaml $(DESTDIR)/etc/batchd/batchd.yaml

clean:
	rm -rf bin
