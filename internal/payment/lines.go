package payment

import (
	"encoding/json"
	"fmt"
	"time"
)

// Line records: the one store for every kind whose lines batchd applies
// one by one with a call to the service (cancels, payment links, edits).
// A line's record is keyed by the file's content and the line (LineKey),
// written before the line's request leaves (its intent) and settled once
// with the outcome. The ledger keeps the records as opaque JSON in one
// bucket per kind (KindInfo.Lines), so that a new kind needs no ledger
// code of its own; LineStore gives a kind its records typed.

// LineKey names one line of one file whose lines batchd applies (cancels,
// payment links): the file's SHA-256 (the same content dropped again is
// the same lines) and the physical line.
type LineKey struct {
	File string `json:"file"` // sha256 hex of the file's content
	Line int    `json:"line"`
}

// LineLedger keeps line records as JSON, by bucket (KindInfo.Lines) and
// LineKey. Every record's JSON object has the field "key": its LineKey.
type LineLedger interface {
	// LineIntent stores rec under k in bucket unless a record is there,
	// which it returns with fresh false.
	LineIntent(bucket string, k LineKey, rec []byte) (stored []byte, fresh bool, err error)
	// LineUpdate passes k's record to change and stores what change
	// returns when ok is true, all in one transaction. A line with no
	// record is an error that Is ErrNotFound: no line is settled that
	// was not first recorded.
	LineUpdate(bucket string, k LineKey, change func(rec []byte) (next []byte, ok bool, err error)) ([]byte, error)
	// LineRecords lists the records of the file whose content hash is
	// file (every file's for ""), in file and line order.
	LineRecords(bucket, file string) ([][]byte, error)
}

// LineStore is one kind's line records of type T on a LineLedger.
type LineStore[T any] struct {
	Bucket string           // the kind's KindInfo.Lines
	Noun   string           // "cancel line", for messages
	Key    func(*T) LineKey // the record's key
	Valid  func(*T) string  // what is wrong with a record about to be recorded, or ""
	Final  func(*T) bool    // the record is settled: it keeps its outcome
}

// Intent records rec unless its line has a record already, which it
// returns with fresh false.
func (s LineStore[T]) Intent(db LineLedger, rec T) (T, bool, error) {
	k := s.Key(&rec)
	if why := s.Valid(&rec); why != "" || k.File == "" || k.Line <= 0 {
		return rec, false, fmt.Errorf("record %s intent: a line needs its file and a line number%s (got %q line %d)", s.Noun, why, k.File, k.Line)
	}
	raw, err := json.Marshal(&rec)
	if err != nil {
		return rec, false, fmt.Errorf("record %s intent for line %d: %w", s.Noun, k.Line, err)
	}
	stored, fresh, err := db.LineIntent(s.Bucket, k, raw)
	if err == nil && !fresh {
		err = json.Unmarshal(stored, &rec)
	}
	if err != nil {
		return rec, false, fmt.Errorf("record %s intent for line %d: %w", s.Noun, k.Line, err)
	}
	return rec, fresh, nil
}

// Settle gives line k's record its outcome with set, unless the record is
// Final already: it keeps its first outcome (the one rule that a line
// settles once). It returns the record as stored.
func (s LineStore[T]) Settle(db LineLedger, k LineKey, set func(*T)) (T, error) {
	var rec T
	_, err := db.LineUpdate(s.Bucket, k, func(raw []byte) ([]byte, bool, error) {
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, false, fmt.Errorf("decode: %w", err)
		}
		if s.Final(&rec) {
			return nil, false, nil
		}
		set(&rec)
		next, err := json.Marshal(&rec)
		return next, err == nil, err
	})
	if err != nil {
		return rec, fmt.Errorf("settle %s %d: %w", s.Noun, k.Line, err)
	}
	return rec, nil
}

// List returns the records of the file whose content hash is file (every
// file's when file is ""), in file and line order.
func (s LineStore[T]) List(db LineLedger, file string) ([]T, error) {
	raws, err := db.LineRecords(s.Bucket, file)
	if err != nil {
		return nil, fmt.Errorf("read the %ss of file %s: %w", s.Noun, file, err)
	}
	out := make([]T, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("decode a %s of file %s: %w", s.Noun, file, err)
		}
	}
	return out, nil
}

// CheckLine is what a line that acts on a check (a cancel or an edit
// line) keeps besides its own fields: the line, the check and its row,
// and what became of it; O is the kind's outcome, whose "sent" is the
// intent.
type CheckLine[O ~string] struct {
	Key     LineKey   `json:"key"`
	CheckID string    `json:"check_id,omitempty"`
	Row     RowKey    `json:"row,omitzero"` // the row that owns the check, when it is batchd's
	Outcome O         `json:"outcome"`
	Note    string    `json:"note,omitempty"`   // the service's words, or what batchd saw
	Status  Status    `json:"status,omitempty"` // the check's status when the line settled
	Sent    time.Time `json:"sent"`
	Settled time.Time `json:"settled,omitzero"`
}

// Settle gives the line its final outcome at at.
func (l *CheckLine[O]) Settle(outcome O, status Status, note string, at time.Time) {
	l.Outcome, l.Status, l.Note, l.Settled = outcome, status, note, at.UTC()
}

// CheckLines is the line store of a kind whose lines act on a check:
// records of type T, each with its CheckLine (Line reaches it), whose
// outcome Sent is the intent.
type CheckLines[T any, O interface {
	~string
	Settled() bool
}] struct {
	Store LineStore[T]
	Line  func(*T) *CheckLine[O]
	Sent  O
}

// NewCheckLines is the store of kind's lines ("cancel line": noun); valid
// says what is wrong with a record about to be recorded, or "".
func NewCheckLines[T any, O interface {
	~string
	Settled() bool
}](kind BatchKind, noun string, sent O, line func(*T) *CheckLine[O], valid func(*T) string) CheckLines[T, O] {
	return CheckLines[T, O]{Line: line, Sent: sent, Store: LineStore[T]{
		Bucket: kind.Lines(), Noun: noun, Valid: valid,
		Key:   func(r *T) LineKey { return line(r).Key },
		Final: func(r *T) bool { return line(r).Outcome.Settled() },
	}}
}

// Intent records rec as sent at now unless its line has a record, which
// it returns with fresh false. Only when it returns fresh (or a record
// still sent) may the line's request leave.
func (s CheckLines[T, O]) Intent(db LineLedger, rec T, now time.Time) (T, bool, error) {
	l := s.Line(&rec)
	l.Outcome, l.Sent, l.Settled = s.Sent, now.UTC(), time.Time{}
	return s.Store.Intent(db, rec)
}

// Settle records line k's final outcome at now; a line settled before
// keeps its first outcome, which is returned.
func (s CheckLines[T, O]) Settle(db LineLedger, k LineKey, o O, st Status, note string, now time.Time) (T, error) {
	if !o.Settled() {
		var none T
		return none, fmt.Errorf("settle %s %d: %q is not a final outcome", s.Store.Noun, k.Line, o)
	}
	return s.Store.Settle(db, k, func(r *T) { s.Line(r).Settle(o, st, note, now) })
}

// List returns the records of the file whose content hash is file (every
// file's for ""), in file and line order.
func (s CheckLines[T, O]) List(db LineLedger, file string) ([]T, error) {
	return s.Store.List(db, file)
}
