package logattr

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestDurationInJSON: the JSON handler writes a duration as people read
// it, not as nanoseconds; the text handler alike.
func TestDurationInJSON(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{49552 * time.Second, `"eta":"13h45m52s"`},
		{1500*time.Millisecond + 123456, `"eta":"1.5s"`},
		{250 * time.Microsecond, `"eta":"250µs"`},
		{0, `"eta":"0s"`},
	} {
		var b bytes.Buffer
		slog.New(slog.NewJSONHandler(&b, nil)).LogAttrs(t.Context(), slog.LevelInfo, "x", Duration("eta", tc.d))
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%d ns: %s, want %s", tc.d, strings.TrimSpace(b.String()), tc.want)
		}
	}
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", Duration("took", 90*time.Second))
	if !strings.Contains(b.String(), "took=1m30s") {
		t.Errorf("text: %s", b.String())
	}
}
