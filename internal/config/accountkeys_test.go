package config

import (
	"os"
	"strings"
	"testing"
)

// TestAccountKeysFileModeAtLoad: a state.account_keys_file others may
// read is refused at load with the fix, never its contents; 0600 loads.
func TestAccountKeysFileModeAtLoad(t *testing.T) {
	ring := chmodFile(t, t.TempDir(), "account-keys", "1 c2VjcmV0LWtleS1ieXRlcy1ub3Qtc2hvd24tYW55d2hlcmU=\n", 0o644)
	yaml := minimal + "state:\n  account_keys_file: " + ring + "\n"
	_, err := Parse([]byte(yaml), "f.yaml", keyEnv())
	fe := findKey(t, err, "state.account_keys_file")
	for _, want := range []string{ring, "mode 0644", "chmod 600 " + ring} {
		if !strings.Contains(fe.Error(), want) {
			t.Errorf("%q does not say %q", fe.Error(), want)
		}
	}
	if strings.Contains(fe.Error(), "c2VjcmV0") {
		t.Error("the finding quotes the key")
	}
	if err := os.Chmod(ring, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(yaml), "f.yaml", keyEnv()); err != nil {
		t.Errorf("a 0600 key ring: %v", err)
	}
}
