package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

// TestIdentityModeRefused: a private key its group or others may read is
// refused before it is parsed, naming sftp.identity_file, the file, the
// mode and the fix, as OpenSSH refuses it; at 0600 it loads.
func TestIdentityModeRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "id_ed25519")
	if _, err := sshkey.Generate(p, "mode test"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadIdentity(p); err != nil {
		t.Fatalf("a 0600 key: %v", err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadIdentity(p)
	if err == nil {
		t.Fatal("a 0644 private key was loaded")
	}
	for _, want := range []string{"sftp.identity_file", p, "mode 0644", "chmod 600 " + p} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Error("the error quotes the key")
	}
}
