package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/batchd/batchd/internal/acctseal"
)

// keyHAHealth is the part of /healthz TestStandbyWithoutTheKeyDoesNotLead
// reads.
type keyHAHealth struct {
	Status string `json:"status"`
	Role   *struct {
		Text    string `json:"text"`
		Leading bool   `json:"leading"`
		Error   string `json:"error"`
	} `json:"role"`
	Failures []struct {
		Check string `json:"check"`
		Error string `json:"error"`
	} `json:"failures"`
}

func (h keyHAHealth) leading() bool { return h.Role != nil && h.Role.Leading }

// refusal is the failure /healthz gives for the missing key, "" when none.
func (h keyHAHealth) refusal() string { return h.failure("may-lead") }

// failed reports whether /healthz lists a failure of check.
func (h keyHAHealth) failed(check string) bool { return h.failure(check) != "" }

// failure is the error of /healthz's failure of check, "" when none.
func (h keyHAHealth) failure(check string) string {
	for _, f := range h.Failures {
		if f.Check == check {
			return f.Error
		}
	}
	return ""
}

// TestStandbyWithoutTheKeyDoesNotLead: two `batchd run` processes share
// one PostgreSQL ledger; B's key ring lacks the key A leads with. B never
// takes the lease, not even once A stopped and the lease is free: its
// /healthz fails with the key's id and the fix, and it logs why once.
// Given the key (the ring file copied), B leads. Then a key rotation
// while B runs: `batchd rekey` adds a key B takes up (and records), and A,
// started again with the old ring, is refused in turn.
func TestStandbyWithoutTheKeyDoesNotLead(t *testing.T) {
	t.Parallel()
	dsn := pgServer(t).NewDatabase(t)
	dir := t.TempDir()
	mk := func(name string) *failoverInstance {
		idir, admin := filepath.Join(dir, name), freePort(t)
		os.MkdirAll(idir, 0o700)
		ring := pgKeyRing(t, idir)
		cfg := writeConfig(t, idir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 5s
log: {format: json}
state: {backend: postgres, lease_ttl: 3s, account_keys_file: %s}
backup: {schedule: ""}
api: {base_url: "http://127.0.0.1:1", mode: test}
schedule: {timezone: UTC, ingest: "@every 1h", submit: "@every 1h", reconcile: "@every 1h"}
admin: {listen: %s}
`, filepath.Join(idir, "state"), ring, admin))
		return &failoverInstance{t: t, name: "host " + name, cfg: cfg, base: "http://" + admin,
			env: []string{"BATCHD_API_KEY=" + migrateTestKey, "BATCHD_POSTGRES_DSN=" + dsn}}
	}
	a, b := mk("a"), mk("b")
	ringA, ringB := filepath.Join(dir, "a", "pg-account-keys"), filepath.Join(dir, "b", "pg-account-keys")
	health := func(in *failoverInstance) keyHAHealth {
		var h keyHAHealth
		getJSON(in.base+"/healthz", &h)
		return h
	}
	stop := func(in *failoverInstance) {
		in.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-in.done; err != nil {
			t.Fatalf("%s after SIGTERM: %v", in.name, err)
		}
	}

	a.start()
	eventually(t, "host a leading", 4*failoverLease, func() bool { return health(a).leading() })
	keyA, err := acctseal.Load(ringA)
	if err != nil {
		t.Fatal(err)
	}
	b.start()
	eventually(t, "host b refusing the lease", 4*failoverLease, func() bool { return health(b).refusal() != "" })
	why := health(b).refusal()
	for _, want := range []string{fmt.Sprintf("account key %d", keyA.Newest()), "copy the key ring file", ringB} {
		if !strings.Contains(why, want) {
			t.Errorf("host b's /healthz says %q; want it to say %q", why, want)
		}
	}

	// A stops and resigns: the lease is free, and B must still not take
	// it, for two lease periods, until its /healthz says no one leads.
	stop(a)
	var sawLeading bool
	eventually(t, "host b reporting no leader for two lease periods", 4*failoverLease, func() bool {
		h := health(b)
		sawLeading = sawLeading || h.leading()
		return h.Role != nil && h.Role.Text == "no leader" && h.failed("leader")
	})
	if sawLeading {
		t.Fatal("host b led without the ledger's account key")
	}
	if n := strings.Count(b.logs.String(), "this instance does not take the leader lease"); n != 1 {
		t.Errorf("host b logged its refusal %d times, want once", n)
	}
	if strings.Contains(b.logs.String(), keyLine(t, ringA)) {
		t.Fatal("host b's log holds a key")
	}

	// Given the key, B leads at its next renewal.
	copyRing(t, ringA, ringB)
	eventually(t, "host b leading once given the key", 4*failoverLease, func() bool { return health(b).leading() })
	if h := health(b); h.Status != "ok" {
		t.Errorf("host b leads, but /healthz is %q: %+v", h.Status, h.Failures)
	}

	// A key rotation while B runs: rekey adds the key, B takes it up.
	out := must(t, map[string]string{"BATCHD_API_KEY": migrateTestKey, "BATCHD_POSTGRES_DSN": dsn}, "rekey", "--config", b.cfg)
	if !strings.Contains(out, "a running batchd holds the ledger") {
		t.Fatalf("rekey while batchd runs:\n%s", out)
	}
	keyB, err := acctseal.Load(ringB)
	if err != nil || len(keyB.IDs()) != 2 {
		t.Fatalf("the ring after rekey while batchd runs: %v, %v", keyB, err)
	}
	// A comes back with the old ring: the new key seals now, A lacks it.
	a.start()
	eventually(t, "host a refusing the lease after the rotation", 4*failoverLease, func() bool {
		return strings.Contains(health(a).refusal(), fmt.Sprintf("account key %d", keyB.Newest()))
	})
	if !health(b).leading() || health(a).leading() {
		t.Fatal("the rotation moved the lease")
	}
	// A one-shot job command on host a is refused alike, before it asks
	// for the lease.
	code, _, errOut := runMain(t, map[string]string{"BATCHD_API_KEY": migrateTestKey, "BATCHD_POSTGRES_DSN": dsn}, "submit", "--config", a.cfg)
	if code != exitFailure || !strings.Contains(errOut, fmt.Sprintf("account key %d", keyB.Newest())) || strings.Contains(errOut, "another batchd instance leads") {
		t.Errorf("batchd submit on the host without the key: exit %d\n%s", code, errOut)
	}
	// And batchd doctor on host a says the same, with the fix.
	_, out, errOut = runMain(t, map[string]string{"BATCHD_API_KEY": migrateTestKey, "BATCHD_POSTGRES_DSN": dsn}, "doctor", "--config", a.cfg)
	if !strings.Contains(out, "account-keys") || !strings.Contains(out, fmt.Sprintf("account key %d", keyB.Newest())) || !strings.Contains(out, "copy the key ring file") {
		t.Errorf("batchd doctor on the host without the key:\n%s%s", out, errOut)
	}
	stop(a)
	stop(b)
}

// copyRing puts the ring file from over to, as an operator copies it
// (mode 0600, replaced whole).
func copyRing(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(to+".new", to); err != nil {
		t.Fatal(err)
	}
}

// keyLine is the base64 of the ring file's last key, to look for in logs.
func keyLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if _, key, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			last = key
		}
	}
	return last
}
