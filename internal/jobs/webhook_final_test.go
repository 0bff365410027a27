package jobs

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/webhook"
)

// fakeEvents answers RecordEvent with a set final status and error.
type fakeEvents struct {
	state.EventLedger
	final payment.Status
	err   error
}

func (f fakeEvents) RecordEvent(context.Context, webhook.Event) (bool, payment.Status, error) {
	return false, f.final, f.err
}

// The receiver's store counts a check an event ended, and nothing for an
// event that ended none or was not recorded.
func TestFinalCounterCountsEventsThatEndAPayment(t *testing.T) {
	var got []map[payment.Status]int
	count := func(m map[payment.Status]int) { got = append(got, m) }
	for _, f := range []fakeEvents{{final: payment.StatusFailed}, {}, {final: payment.StatusVoid, err: errors.New("disk full")}} {
		if _, err := (finalCounter{db: f, onFinal: count}).Record(context.Background(), webhook.Event{}); err != f.err {
			t.Fatalf("Record: %v, want %v", err, f.err)
		}
	}
	if want := []map[payment.Status]int{{payment.StatusFailed: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
}
