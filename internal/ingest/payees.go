package ingest

import (
	"fmt"
	"log/slog"

	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
)

// Payees configures the payee bank-detail check (README "Payee bank-detail
// changes"). Without KeyDir no row is checked or remembered.
type Payees struct {
	KeyDir string       // the state directory, which keeps payee.KeyFile
	Mode   string       // ingest.on_account_change: payee.Warn (""), Hold or Allow
	Memory payee.Memory // the ledger's accounts last paid
}

// markPayees returns loader with every payment row's payee checked and
// marked (payment.Loader.AddMarked), or loader itself when the check is
// off or the batch is not of payments.
func (j *Job) markPayees(loader payment.Loader, meta payment.FileMeta) (payment.Loader, error) {
	pc := j.opts.Payees
	if pc.KeyDir == "" || pc.Memory == nil || !meta.Kind.Payments() {
		return loader, nil
	}
	key, err := payee.LoadKey(pc.KeyDir)
	if err != nil {
		return nil, err
	}
	return &markingLoader{Loader: loader, check: payee.NewChecker(key, pc.Memory, pc.Mode), file: meta.Name, log: j.log}, nil
}

// markingLoader checks each row's payee on its way into the ledger.
type markingLoader struct {
	payment.Loader
	check *payee.Checker
	file  string
	log   *slog.Logger
}

// Add marks the row and loads it with its mark; a change is logged (never
// with the account number) unless the mode is allow.
func (l *markingLoader) Add(line int, p payment.Payment) error {
	m, ok, err := l.check.Mark(&p)
	if err != nil {
		return fmt.Errorf("%s line %d: %w", l.file, line, err)
	}
	if !ok {
		return l.Loader.Add(line, p)
	}
	if c := m.Change; c != nil && c.Action != payee.Allow {
		l.log.Warn("payee's bank account changed", "file", l.file, "line", line, "payee", p.Name,
			"from", payment.Masked(c.From), "to", payment.Masked(c.To), "action", c.Action)
	}
	return l.Loader.AddMarked(line, p, m)
}
