package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/payment"
)

// Destination is where reports go beside their local copy: a folder of an
// outbox (the SFTP server). The zero Destination keeps reports local only.
type Destination struct {
	Outbox payment.Outbox
	Dir    string
}

// Enabled reports whether d sends reports anywhere.
func (d Destination) Enabled() bool { return d.Outbox != nil }

// Deliver is the one way a report reaches the finance team: the report at
// local, already written whole (WriteFile), is streamed to the outbox
// under name. The outbox uploads under a temporary name and renames, so a
// reader sees the whole report or none, and an earlier report of the same
// name is replaced. A zero d does nothing. Every job delivers through it.
func (d Destination) Deliver(ctx context.Context, local, name string) error {
	if !d.Enabled() {
		return nil
	}
	f, err := os.Open(local)
	if err != nil {
		return fmt.Errorf("deliver %s: %w", name, err)
	}
	defer f.Close()
	if err := d.Outbox.Upload(ctx, d.Dir, name, f); err != nil {
		return fmt.Errorf("deliver %s to %s: %w", name, d.Dir, err)
	}
	return nil
}

// DeliverAll delivers every copy of one report, as Table.Write returned
// them (locals, in any format), under name, the CSV's name in the outbox:
// each copy under name with its own extension (PathAs), so that
// payroll.csv.results.csv comes with payroll.csv.results.xlsx. It tries
// every copy and returns the errors together. A zero d does nothing.
func (d Destination) DeliverAll(ctx context.Context, locals []string, name string) error {
	var errs []error
	for _, local := range locals {
		errs = append(errs, d.Deliver(ctx, local, PathAs(name, Format(strings.TrimPrefix(filepath.Ext(local), ".")))))
	}
	return errors.Join(errs...)
}
