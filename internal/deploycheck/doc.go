// Package deploycheck has no code of its own. Its tests check the
// monitoring files under deploy/ (the Prometheus alerting rules and their
// promtool tests, the Grafana dashboard) against the metrics batchd
// exports (internal/metrics): every metric and label they name must exist,
// so that a renamed metric breaks the build, not the pager. They also run
// the Makefile's install target into a scratch DESTDIR (install_test.go).
package deploycheck
