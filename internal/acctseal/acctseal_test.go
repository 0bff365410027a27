package acctseal

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ring(t *testing.T, ids ...uint32) *Ring {
	t.Helper()
	var text strings.Builder
	for _, id := range ids {
		line, err := NewKeyLine(rand.Reader, id)
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(line)
	}
	r, err := Parse([]byte(text.String()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpen(t *testing.T) {
	r := ring(t, 1)
	aad := []byte("row 1/2")
	s, err := r.Seal("123456789012", aad)
	if err != nil {
		t.Fatal(err)
	}
	if !Sealed(s) || strings.Contains(s, "123456789012") {
		t.Fatalf("sealed value %q is not sealed", s)
	}
	if got, err := r.Open(s, aad); err != nil || got != "123456789012" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := r.Open(s, []byte("row 1/3")); !errors.Is(err, ErrDamaged) {
		t.Fatalf("moved to another row: %v, want ErrDamaged", err)
	}
	if got, _ := r.Open("987", aad); got != "987" {
		t.Fatalf("a number in the clear reads as %q", got)
	}
	if s2, _ := r.Seal("", aad); s2 != "" {
		t.Fatalf("empty seals to %q", s2)
	}
}

func TestRotation(t *testing.T) {
	one, _ := NewKeyLine(rand.Reader, 1)
	two, _ := NewKeyLine(rand.Reader, 2)
	old, err := Parse([]byte(one))
	if err != nil {
		t.Fatal(err)
	}
	both, err := Parse([]byte(Header + one + two))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := old.Seal("111122223333", nil)
	if got, err := both.Open(s, nil); err != nil || got != "111122223333" {
		t.Fatalf("the new ring reads the old key's value as %q, %v", got, err)
	}
	s2, _ := both.Seal("111122223333", nil)
	if id, err := KeyID(s2); err != nil || id != 2 || both.Newest() != 2 {
		t.Fatalf("sealed under %d, %v; want the newest, 2", id, err)
	}
	if _, err := old.Open(s2, nil); !errors.Is(err, ErrKeyMissing) {
		t.Fatalf("a ring without key 2: %v, want ErrKeyMissing", err)
	}
	if _, err := ring(t, 1).Open(s, nil); !errors.Is(err, ErrDamaged) {
		t.Fatalf("another key 1 opened the value: %v", err)
	}
}

func TestDamaged(t *testing.T) {
	r := ring(t, 1)
	s, _ := r.Seal("123456789", nil)
	for _, bad := range []string{"~", "~!!", "~AA", s[:len(s)-3], "~" + strings.Repeat("A", 8), s[:5]} {
		if _, err := r.Open(bad, nil); err == nil {
			t.Errorf("Open(%q) = nil error", bad)
		}
	}
	var none *Ring
	if _, err := none.Open(s, nil); !errors.Is(err, ErrKeyMissing) {
		t.Errorf("nil ring: %v", err)
	}
	if _, err := none.Seal("123", nil); err == nil {
		t.Error("nil ring seals")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n", "1\n", "0 AAAA\n", "x AAAA\n", "1 AAAA\n",
		"2 " + strings.Repeat("A", 43) + "=\n2 " + strings.Repeat("A", 43) + "=\n"} {
		if _, err := Parse([]byte(text)); err == nil {
			t.Errorf("Parse(%q) accepted", text)
		}
	}
}

func TestLoadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	r, made, err := LoadOrCreate(path)
	if err != nil || !made {
		t.Fatalf("first: made %v, %v", made, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o", fi.Mode().Perm())
	}
	s, _ := r.Seal("5555", nil)
	again, made, err := LoadOrCreate(path)
	if err != nil || made {
		t.Fatalf("second: made %v, %v", made, err)
	}
	if got, err := again.Open(s, nil); err != nil || got != "5555" {
		t.Fatalf("reopened ring reads %q, %v", got, err)
	}
	os.Chmod(path, 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("mode 0644 accepted: %v", err)
	}
}

func TestAddAndDropKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	r1, _, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := r1.Seal("4444", nil)
	id, err := AddKey(path)
	if err != nil || id == 0 || id == r1.Newest() {
		t.Fatalf("AddKey = %d, %v", id, err)
	}
	r2, err := Load(path)
	if err != nil || r2.Newest() != id || len(r2.IDs()) != 2 {
		t.Fatalf("ring after AddKey: %v, %v", r2.IDs(), err)
	}
	if got, err := r2.Open(s1, nil); err != nil || got != "4444" {
		t.Fatalf("old value under the new ring: %q, %v", got, err)
	}
	s2, _ := r2.Seal("4444", nil)
	if err := DropOldKeys(path); err != nil {
		t.Fatal(err)
	}
	r3, err := Load(path)
	if err != nil || len(r3.IDs()) != 1 || r3.Newest() != id {
		t.Fatalf("ring after DropOldKeys: %v, %v", r3.IDs(), err)
	}
	if _, err := r3.Open(s1, nil); !errors.Is(err, ErrKeyMissing) {
		t.Fatalf("key 1 still opens: %v", err)
	}
	if got, err := r3.Open(s2, nil); err != nil || got != "4444" {
		t.Fatalf("key 2 value: %q, %v", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o", fi.Mode().Perm())
	}
}
