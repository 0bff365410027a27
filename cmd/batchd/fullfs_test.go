package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
)

// TestSubmitOnFullFilesystem is issue 9's full-disk acceptance test:
// `batchd submit` runs as a process with its state_dir on a real tmpfs
// that fills up mid-run, so that a ledger write fails with ENOSPC. The
// run must stop with exit 1 and one line saying which write failed and
// why; once there is room again, the next run must finish every row with
// exactly one check each.
func TestSubmitOnFullFilesystem(t *testing.T) {
	const rows, key = 400, "sk_test_fullfs_0123456789abcdef"
	mnt := mountTmpfs(t, "8m")
	stateDir := filepath.Join(mnt, "state")
	loadRows(t, stateDir, rows)
	url := startSandbox(t, "--key", key)
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 1000, burst: 50, concurrency: 8, timeout: 5s}
submit: {resolve_after: 1s, max_attempts: 5, backoff_max: 200ms}
`, stateDir, url))

	// Leave a little room: enough to open the ledger and submit some rows,
	// far too little for the ledger's growth over 400 rows.
	filler := filepath.Join(mnt, "filler")
	fillUp(t, filler, fullFSRoom)
	t.Logf("ledger %s, %d bytes free for it", ledgerUsage(t, stateDir), freeBytes(t, mnt))

	code, stdout, stderr := submitProcess(t, cfg, key)
	if code != exitFailure {
		t.Fatalf("submit on a full disk: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, stdout, lastLines(stderr, 30))
	}
	// The failure is one plain line among the JSON log lines.
	var plain []string
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, "{") {
			plain = append(plain, line)
		}
	}
	ledger := filepath.Join(stateDir, "batchd.db")
	if len(plain) != 1 || !strings.HasPrefix(plain[0], "batchd submit: ") ||
		!strings.Contains(plain[0], "cannot write the ledger "+ledger) || !strings.Contains(plain[0], "no space left on device") {
		t.Fatalf("want one line \"batchd submit: cannot write the ledger %s: … no space left on device\"; stderr has %d plain lines:\n%s\nstdout:\n%s",
			ledger, len(plain), strings.Join(plain, "\n"), stdout)
	}
	t.Logf("stderr: %s", plain[0])
	inFlight, submitted := rowCounts(t, stateDir)
	atService := len(allChecks(t, client(t, url, key)))
	t.Logf("after the failed run: %d rows submitted, %d in flight, %d checks at the service; stdout: %s",
		submitted, inFlight, atService, strings.TrimSpace(stdout))
	if atService == 0 || submitted >= rows {
		t.Fatalf("the disk did not fill up mid-run (%d checks at the service, %d of %d rows submitted): the test proves too little; adjust fullFSRoom",
			atService, submitted, rows)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = submitProcess(t, cfg, key)
	if code != exitOK {
		t.Fatalf("submit after freeing the disk: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, lastLines(stderr, 30))
	}
	t.Logf("second run: %s", strings.TrimSpace(stdout))
	assertOneCheckPerRow(t, stateDir, client(t, url, key), rows, func(r *payment.Row, ch echeck.Check) bool {
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	})
}

// fullFSRoom is the free space left on the tmpfs for the failing run.
const fullFSRoom = 64 << 10

// mountTmpfs mounts a tmpfs of the given size on a new directory and
// unmounts it when the test ends. It needs root, as CI has; anywhere else
// the test fails, saying why, rather than skip.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if uid := os.Geteuid(); uid != 0 {
		t.Fatalf("this test mounts a tmpfs to fill a real file system and needs root (CI runs as root); euid is %d", uid)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("mount a %s tmpfs on %s (needs root and CAP_SYS_ADMIN; CI has both): %v: %s", size, dir, err, out)
	}
	// Cleanups run last-in first-out: this one runs before TempDir's
	// removal, after those of anything the test starts later.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillUp writes path until the file system is full, then gives back room
// bytes.
func fillUp(t *testing.T, path string, room int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size int64
	for _, chunk := range []int{1 << 20, 4 << 10, 512} {
		buf := make([]byte, chunk)
		for i := range buf {
			buf[i] = 0xa5
		}
		for {
			n, err := f.Write(buf)
			size += int64(n)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatalf("fill %s: %v", path, err)
			}
		}
	}
	if err := f.Truncate(max(size-room, 0)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// freeBytes is the space left on the file system holding dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// ledgerUsage describes the ledger file's size and the space it takes.
func ledgerUsage(t *testing.T, stateDir string) string {
	t.Helper()
	fi, err := os.Stat(filepath.Join(stateDir, "batchd.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%d bytes long, %d bytes allocated", fi.Size(), st.Blocks*512)
}

// submitProcess runs `batchd submit` as a process and returns its exit code
// and output.
func submitProcess(t *testing.T, cfg, key string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, "submit", "--config", cfg)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		code = exit.ExitCode()
	default:
		t.Fatalf("batchd submit: %v\n%s", err, errb.String())
	}
	return code, out.String(), errb.String()
}
