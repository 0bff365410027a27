package bolt

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/batchd/batchd/internal/durable"
)

// MarkerName is the marker file in the state directory. It records that a
// ledger was created there, its instance and its generation; it is small,
// rewritten atomically, and must not be deleted. A file has no server to
// tell its copies apart (kv.Origin), so the marker is how an older copy,
// or another installation's ledger, put in its place is told apart: the
// ledger's rules (internal/state) compare it with what the file says.
const MarkerName = ".batchd-ledger"

// Marker is the content of the marker file.
type Marker struct {
	Instance   string `json:"instance"`
	Generation uint64 `json:"generation"`
	// Previous lists the instances this ledger had before restores.
	Previous []string  `json:"previous,omitempty"`
	Updated  time.Time `json:"updated"`
	Note     string    `json:"note"`
}

const markerNote = "batchd's record that a ledger (batchd.db) exists in this directory; do not delete it. See batchd check / batchd restore."

// ReadMarker returns the marker in dir; ok is false when there is none.
func ReadMarker(dir string) (m Marker, ok bool, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, MarkerName))
	if errors.Is(err, os.ErrNotExist) {
		return Marker{}, false, nil
	}
	if err != nil {
		return Marker{}, true, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Marker{}, true, fmt.Errorf("unreadable marker: %w", err)
	}
	return m, true, nil
}

// WriteMarker replaces the marker atomically: a temporary file, fsync,
// rename, fsync of the directory.
func WriteMarker(dir string, m Marker) error {
	m.Note = markerNote
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, MarkerName), append(raw, '\n'))
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, fsyncs it, renames it over path and fsyncs the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return durable.SyncDir(filepath.Dir(path))
}
