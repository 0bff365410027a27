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

## bench: the benchmarks recorded in docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...

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
