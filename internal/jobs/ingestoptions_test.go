package jobs

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ledgertest"
)

// TestIngestOptionsFromConfig: ingest.claim_timeout, sftp.temp_upload,
// api.rate and schedule.submit_timeout reach the ingest job. claim_timeout once sat in a comment, and every
// instance took stale claims back after the default hour whatever it said.
func TestIngestOptionsFromConfig(t *testing.T) {
	c := config.Default()
	c.StateDir = filepath.Join(t.TempDir(), "state")
	c.API.BaseURL, c.API.Mode = "http://127.0.0.1:1", config.ModeTest
	c.SetAPIKey("sk_test_ingestoptions_0123456789")
	c.Ingest.ClaimTimeout = config.Duration(3 * time.Hour)
	c.SFTP.TempUpload = config.TempUploadSuffix
	env := openEnv(t, ledgertest.Bbolt, c, clocktest.New(clocktest.Monday).Now)
	o := env.ingestOptions()
	if o.ClaimTimeout != 3*time.Hour || !o.NoDotNames {
		t.Fatalf("claim timeout %s, no dot names %v; want 3h and true", o.ClaimTimeout, o.NoDotNames)
	}
	if o.SubmitRate != c.API.Rate || o.SubmitTimeout != c.Schedule.SubmitTimeout.Std() {
		t.Fatalf("submit rate %g, timeout %s; want api.rate %g and schedule.submit_timeout %s",
			o.SubmitRate, o.SubmitTimeout, c.API.Rate, c.Schedule.SubmitTimeout)
	}
}
