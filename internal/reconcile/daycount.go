package reconcile

// dayCount is what the ledger says of one service date: the rows
// batchd holds whose check the service dates that day, and how many
// of them are not final.
type dayCount struct {
	date Date
	rows int // rows batchd holds whose check was created on date
	open int // of those, the rows whose check is not final
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
