# batchd build, test and benchmark entry points. CI runs `make test` exactly
# as the README says (see .ci/run).
GO      ?= go
PREFIX  ?= /usr/local
DESTDIR ?=
BIN     := bin/batchd

# The version `batchd version` prints and the package carries: git's
# description of the commit (v1.2.3, v1.2.3-4-gabc1234-dirty, or a bare
# abc1234 before the first tag), unless given: make deb VERSION=1.2.3.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
# The version linked into the binary: VERSION, or for the package its
# Debian version (see deb:), so `batchd version` names the installed package.
BIN_VERSION = $(VERSION)
LDFLAGS = -s -w -X main.version=$(BIN_VERSION)
# One way to build the binary, for make install and the package alike:
# static (no cgo, so it runs on any glibc), with no build paths in it. The
# package's build then reuses install's compiled packages.
GOBUILD  = CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
# The same as a Debian version: no leading v, the first - as + and the
# others as . (1.2.3+4.gabc1234.dirty sorts after 1.2.3), and 0.0.0+git
# before a bare commit (0.0.0+gitabc1234+dirty), since a Debian version
# starts with a digit.
DEB_VERSION := $(shell printf '%s\n' '$(VERSION)' | sed -E 's/^v//; /^[0-9]+(\.[0-9]+)+/!s/^/0.0.0+git/; s/-/+/; s/-/./g')
DEB     := dist/batchd_$(DEB_VERSION)_amd64.deb
# The package's Maintainer: and its changelog's signature. Set it to the
# team that answers for the package: make deb MAINTAINER='Ops <ops@corp>'.
MAINTAINER ?= batchd maintainers <batchd@example.com>
# The commit's date (RFC 2822) for the changelog and the man page, so the
# same commit builds the same package.
DEB_DATE := $(shell git log -1 --format=%cD 2>/dev/null || date -u -R)
# nfpm, pinned. v2.46 and later need go.digitalxero.dev modules, which not
# every module proxy mirror serves; v2.45.2 builds from proxy.golang.org
# alone. A first run downloads and compiles it: 40 s on 2 idle cores,
# up to 2 min on a loaded machine; later runs take a second.
NFPM    := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2

# The unit with ExecStart= pointing at $(1)/bin/batchd: make install and
# the package install the same unit, each with its own binary's path.
render_unit = sed -E 's|^ExecStart=[^ ]*/batchd |ExecStart=$(1)/bin/batchd |' systemd/batchd.service

# batchd(1), batchd.bash and _batchd from the help of the binary $(1),
# written into the folder $(2), naming version $(3) and the commit's date:
# make install and the package ship the same pages (tools/genman).
genman = $(GO) run ./tools/genman -bin $(1) -out $(2) -version '$(3)' -date "$$(date -u -d '$(DEB_DATE)' +%F)"

.PHONY: build test bench bench-distance fuzz vet install deb clean

build:
	$(GOBUILD) -o $(BIN) ./cmd/batchd

## test: vet, the alert rules (promtool check and unit tests), the whole
## suite with the race detector (the real-sshd integration tests fail,
## never skip, when sshd is missing), the systemd unit's verify and
## security score (at most 2.0), and the Debian package and its contents.
test:
	$(GO) vet ./...
	@command -v promtool >/dev/null 2>&1 || { echo >&2 "make test: promtool not found; install it with: apt-get install prometheus"; exit 1; }
	promtool check rules deploy/prometheus/alerts.yml
	promtool test rules deploy/prometheus/alerts_test.yml
	$(GO) test -race -count=1 -timeout 15m ./...
	./.ci/systemd-check
	$(MAKE) --no-print-directory deb VERSION='$(VERSION)'
	./.ci/deb-check $(DEB)

## bench: the benchmarks recorded in docs/benchmarks.md. Ingest and submit
## run once each at full size (100 s of it is the rate-limited submit, 4
## minutes the adaptive concurrency runs at 300 ms and 5 ms latency), the
## reconcile of 100k checks runs as real processes, and every other
## package's benchmarks run as usual. About 12 minutes.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $$($(GO) list ./... | grep -v -x -e '.*/internal/ingest' -e '.*/internal/submit')
	$(GO) test -run '^$$' -bench 'Ingest' -benchtime 1x -benchmem -timeout 30m ./internal/ingest -ingest.rows 1000000
	$(GO) run ./tools/benchingest -rows 1000000 -mode gocsv
	$(GO) run ./tools/benchingest -rows 1000000 -mode ingest
	$(GO) test -run '^$$' -bench 'Submit' -benchtime 1x -timeout 30m ./internal/submit -submit.limited.creates 20000
	./tools/bench-reconcile.sh

## bench-distance: issue 31's figures in one run: submit (2,000 rows at
## api.rate 200 and unlimited) and reconcile (20,000 checks) on bbolt and
## on PostgreSQL over TCP direct, +0.5 ms and +1 ms each way, one package
## after the other (-p 1) so that neither slows the other. PostgreSQL is
## started by the benchmarks (internal/pgtest), the delay proxy in a
## process of its own (internal/delayproxy). About 5 minutes.
bench-distance:
	$(GO) test -p 1 -run '^$$' -bench 'SubmitDistance|ReconcileDistance' -benchtime 1x -timeout 45m ./internal/submit ./internal/reconcile

## fuzz: a short run of every fuzz target beyond its seed corpus.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s $$pkg || exit 1; \
	  done; \
	done

## install: the binary in $(PREFIX)/bin, its man page and bash and zsh
## completions under $(PREFIX)/share, the unit (its ExecStart= set to
## that binary) in /etc/systemd/system, the example configuration as
## /etc/batchd/batchd.yaml only when there is none: an existing (edited)
## one is never overwritten, and the shipped one goes beside it as
## batchd.yaml.dist to compare with. internal/deploycheck tests this.
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/batchd
	rm -rf bin/man && mkdir -p bin/man
	$(call genman,$(BIN),bin/man,$(VERSION))
	install -D -m 0644 bin/man/batchd.1 $(DESTDIR)$(PREFIX)/share/man/man1/batchd.1
	install -D -m 0644 bin/man/batchd.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/batchd
	install -D -m 0644 bin/man/_batchd $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_batchd
	install -d -m 0755 $(DESTDIR)/etc/systemd/system
	$(call render_unit,$(PREFIX)) >$(DESTDIR)/etc/systemd/system/batchd.service
	chmod 0644 $(DESTDIR)/etc/systemd/system/batchd.service
	@conf='$(DESTDIR)/etc/batchd/batchd.yaml'; \
	if [ -e "$$conf" ] || [ -L "$$conf" ]; then \
	  echo "install -D -m 0644 configs/batchd.yaml $$conf.dist  # $$conf exists: kept as it is"; \
	  install -D -m 0644 configs/batchd.yaml "$$conf.dist"; \
	else \
	  echo "install -D -m 0644 configs/batchd.yaml $$conf"; \
	  install -D -m 0644 configs/batchd.yaml "$$conf"; \
	fi

## deb: dist/batchd_<version>_amd64.deb (deploy/nfpm.yaml): a static
## binary in /usr/bin, the unit in /lib/systemd/system, the configuration
## as a conffile, the alert rules and dashboard in /usr/share/batchd, the
## man page and bash and zsh completion generated from the binary's help
## (tools/genman: run on the amd64 binary, so on an amd64 host), copyright,
## changelog and the docs README.md links to in /usr/share/doc/batchd.
deb: BIN_VERSION = $(DEB_VERSION)
deb:
	rm -rf dist/pkg && mkdir -p dist/pkg
	GOOS=linux GOARCH=amd64 $(GOBUILD) -o dist/pkg/batchd ./cmd/batchd
	$(call render_unit,/usr) >dist/pkg/batchd.service
	$(call genman,dist/pkg/batchd,dist/pkg,$(DEB_VERSION))
	gzip -9n dist/pkg/batchd.1
	deploy/deb/changelog '$(DEB_VERSION)' '$(MAINTAINER)' '$(DEB_DATE)' | gzip -9n >dist/pkg/changelog.gz
	rm -f dist/batchd_*_amd64.deb
	BATCHD_DEB_VERSION='$(DEB_VERSION)' BATCHD_MAINTAINER='$(MAINTAINER)' $(GO) run $(NFPM) package --config deploy/nfpm.yaml --packager deb --target $(DEB)

clean:
	rm -rf bin dist
