package remote_test

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/remote"
)

// TestConnectedAtInfoOnlyOnAChange: the daemon dials afresh every run;
// with one Presence shared by the runs' Clients, "sftp connected" is at
// info for the first connect and the first after a failed one, and at
// debug for every other.
func TestConnectedAtInfoOnlyOnAChange(t *testing.T) {
	s, _ := startSFTPD(t)
	var logs logBuffer
	o := sftpdOptions(s)
	o.Logger, o.Presence = logs.logger(), &remote.Presence{}
	down := o
	down.Address = "127.0.0.1:1" // nothing listens there
	for _, step := range []struct {
		opts remote.Options
		want string // the level of "sftp connected", "" for a failed dial
	}{{o, "INFO"}, {o, "DEBUG"}, {o, "DEBUG"}, {down, ""}, {o, "INFO"}, {o, "DEBUG"}} {
		before := len(logs.String())
		c, err := remote.Dial(ctxT(t), step.opts)
		if (err == nil) != (step.want != "") {
			t.Fatalf("dial %s: %v", step.opts.Address, err)
		}
		if c != nil {
			c.Close()
		}
		line := ""
		for _, l := range strings.Split(logs.String()[before:], "\n") {
			if strings.Contains(l, "sftp connected") {
				line = l
			}
		}
		if step.want != "" && !strings.Contains(line, "level="+step.want) {
			t.Fatalf("want \"sftp connected\" at %s, got %q", step.want, line)
		}
	}
}
