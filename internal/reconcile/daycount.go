package reconcile

// dayCount is what the ledger says of one service date: the rows
// batchd holds whose check the service dates that day, and how many
// of them are not final.
type dayCount struct {
	date Date
	rows int // rows batchd holds whose check was created on date
	open int // of those, the rows whose check is not final
	// until, when set, makes the count stand for every date from date to
	// until, dates without rows included, which the plan must list
	// (mustList): checks made elsewhere may be there.
	until Date
}

// last is the last date the count stands for.
func (d dayCount) last() Date {
	if d.until.IsZero() {
		return d.date
	}
	return d.until
}

// mustList folds the counts of the dates of must, the last of the
// window, into one count the plan has to list, and returns the counts
// with it last; must's zero value leaves them as they are.
func mustList(in []dayCount, must Window) []dayCount {
	if must.From.IsZero() {
		return in
	}
	k := len(in)
	for k > 0 && !in[k-1].date.Before(must.From) {
		k--
	}
	all := dayCount{date: must.From, until: must.To}
	for _, d := range in[k:] {
		all.rows += d.rows
		all.open += d.open
	}
	return append(in[:k:k], all)
}

// splitWindow returns the counts of the dates in w, in the order given,
// and the rows not final on the dates outside it: those are fetched by id
// whatever the plan, since a run lists no date outside its window.
func splitWindow(days []dayCount, w Window) (in []dayCount, outside int) {
	for _, d := range days {
		if w.Contains(d.date) {
			in = append(in, d)
		} else {
			outside += d.open
		}
	}
	return in, outside
}
