package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/batchd/batchd/internal/testsshd"
)

// Two installations (separate state_dirs, so separate ledgers) watch one
// SFTP inbox on a real sshd, and `batchd ingest` runs in both at the same
// time, round after round, while files keep arriving. Every file must be
// ingested by exactly one of them: the claim (a rename into the instance's
// claim folder that only one process can win) decides, since neither
// ledger knows what the other holds.
func TestTwoInstallationsClaimEachFileOnce(t *testing.T) {
	const (
		rounds  = 5
		perRoll = 4 // files per round: 20 in all
	)
	sshd := testsshd.Start(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	var cfgs []string
	for _, dir := range dirs {
		cfgs = append(cfgs, writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s/state
api: {base_url: "http://127.0.0.1:1", mode: test}
log: {format: json}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {done_marker: true, stable_for: 0s}
`, dir, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
			sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox"))))
	}

	var want []string
	ingestedBy := map[string]int{} // file -> installation, from the ingest output
	for round := range rounds {
		for i := range perRoll {
			n := round*perRoll + i
			name := fmt.Sprintf("pay-%02d.csv", n)
			want = append(want, name)
			// Distinct content per file, so no file is a duplicate of another.
			body := fmt.Sprintf("amount,memo,name,email,bank_routing,bank_account\r\n"+
				"%d.%02d,rent %d,Ann,ann@example.com,999900001,1111000016\r\n", 10+n, n, n)
			for p, b := range map[string]string{name: body, name + ".done": ""} {
				if err := os.WriteFile(sshd.Path("inbox", p), []byte(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		outs := make([]string, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for k, cfg := range cfgs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(binary, "ingest", "--config", cfg)
				cmd.Env = append(os.Environ(), "BATCHD_API_KEY=sk_test_ingest_0123456789abcdef")
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				errs[k] = cmd.Run()
				outs[k] = stdout.String()
				if errs[k] != nil {
					outs[k] += stderr.String()
				}
			}()
		}
		wg.Wait()
		for k := range cfgs {
			if errs[k] != nil {
				t.Fatalf("round %d, installation %d: batchd ingest: %v\n%s", round, k, errs[k], outs[k])
			}
			for _, line := range strings.Split(outs[k], "\n") {
				f := strings.Fields(line)
				if len(f) < 6 || !strings.HasPrefix(f[0], "pay-") {
					continue
				}
				if f[4] != "accepted" {
					t.Fatalf("round %d, installation %d: %s", round, k, line)
				}
				// One line per file, saying where it went: inbox, this
				// installation's claim folder, archive.
				if !strings.Contains(line, sshd.Path("inbox", f[0])+" -> "+sshd.Path("inbox", ".batchd")+"/") ||
					!strings.Contains(line, " -> "+sshd.Path("archive")+"/") {
					t.Errorf("the line does not say where the file went: %s", line)
				}
				if prev, ok := ingestedBy[f[0]]; ok {
					t.Fatalf("%s accepted by installation %d and again by %d:\n%s\n---\n%s", f[0], prev, k, outs[0], outs[1])
				}
				ingestedBy[f[0]] = k
			}
		}
		t.Logf("round %d:\n%s---\n%s", round, outs[0], outs[1])
	}

	// The ledgers: every file is a batch in exactly one of them.
	perLedger := make([][]string, 2)
	var all []string
	for k, cfg := range cfgs {
		perLedger[k] = statusFiles(t, cfg)
		all = append(all, perLedger[k]...)
		for _, f := range perLedger[k] {
			if by, ok := ingestedBy[f]; !ok || by != k {
				t.Errorf("%s is in ledger %d, but the ingest output says installation %d took it (%v)", f, k, by, ok)
			}
		}
	}
	sort.Strings(all)
	if strings.Join(all, ",") != strings.Join(want, ",") {
		t.Fatalf("the ledgers hold %v, want each of %v once", all, want)
	}
	t.Logf("installation 0 ingested %d files, installation 1 %d", len(perLedger[0]), len(perLedger[1]))

	// The server: archive holds each file once; nothing is left anywhere else.
	var archived []string
	var left []string
	filepath.WalkDir(sshd.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(sshd.Root, p)
		switch {
		case strings.HasPrefix(rel, "archive/") && strings.HasSuffix(rel, ".csv"):
			archived = append(archived, filepath.Base(rel))
		case strings.HasPrefix(rel, "archive/"):
		default:
			left = append(left, rel)
		}
		return nil
	})
	sort.Strings(archived)
	if strings.Join(archived, ",") != strings.Join(want, ",") {
		t.Errorf("archive holds %v, want each of %v once", archived, want)
	}
	if len(left) != 0 {
		t.Errorf("files left outside archive: %v", left)
	}
	// Each installation's claim folder is named by its ledger's id.
	claims, err := os.ReadDir(sshd.Path("inbox", ".batchd"))
	if err != nil || len(claims) != 2 {
		t.Fatalf("claim folders: %v, %v", claims, err)
	}
}

// statusFiles returns the files of the batches in a ledger, from
// `batchd status --json`.
func statusFiles(t *testing.T, cfg string) []string {
	t.Helper()
	cmd := exec.Command(binary, "status", "--config", cfg, "--json")
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY=sk_test_ingest_0123456789abcdef")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("batchd status: %v", err)
	}
	var st struct {
		Batches []struct {
			File   string `json:"file"`
			Status string `json:"status"`
		} `json:"batches"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	var files []string
	for _, b := range st.Batches {
		files = append(files, b.File)
	}
	return files
}
