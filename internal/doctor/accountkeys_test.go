package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/state"
)

// TestAccountKeysNamesTheMissingKey: doctor passes a host whose key ring
// holds the key the ledger seals with, and fails one whose ring lacks
// it, naming the key's id and the fix, never a key.
func TestAccountKeysNamesTheMissingKey(t *testing.T) {
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	db, err := state.Open(cfg.StateDir, state.Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.SealingKey()
	db.Close()
	if err != nil || id == 0 {
		t.Fatalf("SealingKey = %d, %v", id, err)
	}
	ledger, rep := checkLedger(cfg)
	if r := AccountKeys(cfg, rep); ledger.Status != OK || len(r) != 1 || r[0].Status != OK || !strings.Contains(r[0].What, fmt.Sprint(id)) {
		t.Fatalf("the ring that sealed: %+v %+v", ledger, r)
	}

	ring := filepath.Join(cfg.StateDir, acctseal.FileName)
	os.Remove(ring)
	if _, _, err := acctseal.LoadOrCreate(ring); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(ring)
	r := AccountKeys(cfg, rep)
	if len(r) != 1 || r[0].Status != Fail || !strings.Contains(r[0].What, fmt.Sprintf("account key %d", id)) ||
		!strings.Contains(r[0].Fix, "copy the key ring file") {
		t.Fatalf("another ring: %+v", r)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if _, key, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") && strings.Contains(r[0].What+r[0].Fix, key) {
			t.Fatal("the result quotes a key")
		}
	}
}
