package config

import (
	"strings"
	"testing"
	"time"
)

func TestHealthFailingAfter(t *testing.T) {
	c := Default()
	if got := c.Health.FailingAfter.Std(); got != DefaultFailingAfter {
		t.Fatalf("default health.failing_after = %s, want %s", got, DefaultFailingAfter)
	}
	c.Health.FailingAfter = Duration(500 * time.Millisecond)
	var f findings
	c.validateHealth(&f)
	if err := f.join(); err == nil || !strings.Contains(err.Error(), "health.failing_after") {
		t.Fatalf("a 500ms health.failing_after validated: %v", err)
	}
}
