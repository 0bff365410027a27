package payment

import (
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
)

// Batch labels. A row whose file gave no label carries its batch's,
// batchd-<instance>-<batch>: the ledger's instance id (six hex digits,
// new after every restore or rewind) and the batch's sequence number.
// BatchLabel makes it and ParseBatchLabel reads it back, so that the
// ledger that gives labels out and reconcile, which recognises the checks
// of a batch the ledger lost, agree on one format.

const batchLabelPrefix = "batchd-"

// BatchLabel is the label of batch id of ledger instance inst.
func BatchLabel(inst string, id uint64) string {
	return batchLabelPrefix + inst + "-" + strconv.FormatUint(id, 10)
}

// ParseBatchLabel reads a label made by BatchLabel as the service may
// echo it (trimmed, in any case: see SameLabel). ok is false for any
// other label: a file's own, or one that merely starts like batchd's.
// inst comes back in lower case, as batchd makes instance ids.
func ParseBatchLabel(label string) (inst string, id uint64, ok bool) {
	rest, found := strings.CutPrefix(labelKey(label), batchLabelPrefix)
	if !found {
		return "", 0, false
	}
	inst, seq, found := strings.Cut(rest, "-")
	if !found || inst == "" || seq == "" || seq[0] == '0' || strings.Trim(inst, "0123456789abcdef") != "" {
		return "", 0, false
	}
	id, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return inst, id, true
}

// LostCheck is a check batchd made for a batch its ledger no longer has:
// the database went back in time (a failover to a standby that had not
// received the last writes, a point-in-time recovery, a restored
// snapshot) after the batch was ingested and sent. Its label is the lost
// batch's (batchd-<instance>-<batch>), of this ledger's current or a
// previous instance. It is a real payment made by batchd: reconcile
// records it (LostLedger) so that ingest refuses the same payments
// dropped again, and reports it as such, never as a stranger to void.
type LostCheck struct {
	ID       string      `json:"id"`
	Label    string      `json:"label"`
	Number   string      `json:"number"`
	Amount   money.Cents `json:"amount"`
	Status   Status      `json:"status,omitempty"`
	Created  time.Time   `json:"created,omitzero"` // by the service's clock, UTC; zero when not given
	Instance string      `json:"instance"`         // of the label
	Batch    uint64      `json:"batch"`            // of the label
	Recorded time.Time   `json:"recorded"`         // when reconcile first recorded it
}

// LostCheckOf is c, found to carry the label of batch id of instance
// inst, recorded at.
func LostCheckOf(c *Check, inst string, id uint64, at time.Time) LostCheck {
	return LostCheck{ID: c.ID, Label: c.Label, Number: c.Number, Amount: c.Amount, Status: c.Status,
		Created: c.Created.UTC(), Instance: inst, Batch: id, Recorded: at.UTC()}
}

// LostLedger keeps the checks of batches the ledger lost.
type LostLedger interface {
	// LostLabels says which of labels name a batch this ledger gave out,
	// under its current or a previous instance, and no longer has (nor
	// pruned), in one read: the key is the label as given.
	LostLabels(labels []string) (map[string]bool, error)
	// RecordLost records checks of lost batches, by check id: a check
	// recorded before keeps its first Recorded time and takes the new
	// status.
	RecordLost(cs []LostCheck) error
	// LostChecks lists the recorded checks of lost batches, by check id.
	LostChecks() ([]LostCheck, error)
}
