package reconcile

import (
	"fmt"

	"github.com/batchd/batchd/internal/payment"
)

// A check from a lost batch: no row owns it, and its label is the label
// batchd gave a batch (batchd-<instance>-<batch>, of this ledger's
// current or a previous instance) that the ledger no longer has, because
// its database went back in time after the batch was ingested and sent.
// It is a real payment made by batchd, so it is reported as such, never as
// a stranger to void, and recorded in the ledger, where ingest finds it
// when the same payments are dropped again.

// KindLostBatch is a check batchd made for a batch its ledger lost.
const KindLostBatch = "lost_batch"

const actionLostBatch = "batchd made this check for a payment file whose record the ledger lost when its database went back in time (a failover or a restore): it is a real payment. " +
	"Do not void it and do not upload the file again: its copy is in the SFTP archive folder, dated on or shortly before the check's creation, and batchd refuses it while this check is on record. " +
	"Pay by hand only the rows of that file that no check of this batch label covers."

// lostChecks picks, among the listed checks no row owns, those of a lost
// batch, records them in the ledger and returns their exceptions by
// check id. A check known only from a webhook event carries no label and
// stays unknown.
func (m *matcher) lostChecks() (map[string]*exception, error) {
	m.mu.Lock()
	var cands []*payment.Check
	var labels []string
	for id, c := range m.unknown {
		if _, heard := m.heard[id]; heard {
			continue
		}
		if _, _, ok := payment.ParseBatchLabel(c.Label); ok {
			cands = append(cands, c)
			labels = append(labels, c.Label)
		}
	}
	m.mu.Unlock()
	if len(cands) == 0 {
		return nil, nil
	}
	lost, err := m.db.LostLabels(labels)
	if err != nil {
		return nil, err
	}
	now := m.now()
	excs := map[string]*exception{}
	var recs []payment.LostCheck
	for _, c := range cands {
		if !lost[c.Label] {
			continue
		}
		inst, batch, _ := payment.ParseBatchLabel(c.Label)
		recs = append(recs, payment.LostCheckOf(c, inst, batch, now))
		e := checkException(KindLostBatch, c)
		e.detail = fmt.Sprintf("its label is batch %d of ledger instance %s, which this ledger no longer has; created %s by the service's clock",
			batch, inst, serviceStamp(c.Created))
		e.action = actionLostBatch
		excs[c.ID] = e
	}
	if err := m.db.RecordLost(recs); err != nil {
		return nil, err
	}
	if len(recs) > 0 {
		m.log.Warn("checks of a batch the ledger lost: recorded, and reported as lost_batch", "checks", len(recs))
	}
	return excs, nil
}
