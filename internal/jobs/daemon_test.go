package jobs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/submit"
)

type fakeRecorder map[string]string

func (r fakeRecorder) Record(source string, err error) { r[source] = err.Error() }
func (r fakeRecorder) Clear(source string)             { delete(r, source) }

func TestErrorsAreFiledUnderTheirSource(t *testing.T) {
	// Submit's "work left undone" wraps the last service failure.
	undone := fmt.Errorf("%w: 3 rows left pending and 0 in doubt after their attempts; the last error: %w",
		submit.ErrIncomplete, fmt.Errorf("HTTP 503: %w", payment.ErrService))
	if payment.SourceOf(undone) != payment.SourceAPI {
		t.Errorf("work left undone by submit filed under %s", payment.SourceOf(undone))
	}
	ledger := &payment.LedgerError{Op: "write", Path: "/x/batchd.db", Err: errors.New("no space left on device")}
	if src := payment.SourceOf(errors.Join(undone, ledger)); src != payment.SourceLedger {
		t.Errorf("a ledger failure filed under %s", src)
	}

	rec := fakeRecorder{}
	s := Scheduled{Errors: rec}
	s.note(fmt.Errorf("sftp list /inbox: %w", payment.ErrRemote), payment.SourceSFTP, payment.SourceLedger)
	s.note(ledger, payment.SourceAPI, payment.SourceLedger)
	s.note(undone, payment.SourceAPI, payment.SourceLedger)
	if len(rec) != 3 || rec["sftp"] == "" || rec["ledger"] != ledger.Error() || rec["api"] != undone.Error() {
		t.Fatalf("recorded %v", rec)
	}
	s.note(nil, payment.SourceAPI, payment.SourceLedger) // a submit that worked
	if len(rec) != 1 || rec["sftp"] == "" {
		t.Fatalf("after a run that worked: %v", rec)
	}
}
