// Package reconcile compares what batchd believes it created with what the
// eCheck service holds, records every status change in the ledger, and
// writes the day's three reports: status, settlement and exceptions.
//
// A run lists the checks created in a window of dates (GET /v1/check/list,
// oldest first, 100 a page), matches each one to its ledger row by
// check_id, resolves rows whose create answer was lost (by label, number
// and amount), confirms every expected check absent from the list with
// GET /v1/check/{id}, and then writes the reports. It only ever reads at
// the service: reconcile never creates, edits or voids a check.
//
// # A list that changes while it is read
//
// Paging is offset based, so the list can move under the walk: checks are
// created (appended at the end, since the walk is oldest first), change
// status (which does not move them) or, conceivably, disappear (which
// shifts every later check one place towards the front). The walk
// de-duplicates by check_id and accepts a pass only when the number of
// distinct checks seen reaches the largest total any page reported; while
// no total shrinks, that proves every check that existed at the last read
// was seen, whatever the order in which pages were fetched. Otherwise it
// re-reads: the tail (from the first short page) while the list only grew,
// everything when a total shrank. Passes are bounded (Options.MaxPasses);
// a walk that never became consistent is logged, counted in the Summary
// and reported as an exception of kind "incomplete".
//
// # Which rows the reports show
//
// The status report has one line per submitted row whose check was
// created in the window, or was not final when the run began, or was
// looked at during the run. Each such row was either seen in the list or
// fetched by GET in this run, unless it is reported missing. The
// settlement report is computed from exactly those lines, so its totals
// equal the status report's sums to the cent; it sums money paid, on its
// way and not paid apart (payment.Status.Outcome), never together. A
// check that ended not paid (returned, voided) is an exception for
// Options.ExceptionDays, shown or not in the status report (outcomes.go).
//
// # Memory and time
//
// A run holds no copy of the rows it reports, so its memory does not grow
// with its window: a bit per row looked at, a 64-bit hash per check
// listed, the exceptions, and a few pages in flight. The status report is
// written while the list is walked, by a pass over the ledger in batch
// and line order that takes each row once the walk has looked at its
// check (or is over), fetches by GET the rows the list did not show, and
// sums the settlement from the lines as it writes them. Pages are fetched
// ahead of their matching, a few at most, so a run takes little more than
// its pages at the service's rate. bbolt's mapped pages read on the way
// are handed back to the kernel every few thousand rows
// (kv.Tx.Release).
//
// # Dates listed once
//
// Only a listed date shows the checks made outside batchd, but once a
// date is past, no check is made on it any more: listed then, it need
// not be listed again to find them. Without webhooks, a run lists the
// dates since the last run that listed its window's last dates (ListedJob,
// with listedSlack days for the service's clock), and reads the rows not
// final on earlier dates the cheapest way, as with webhooks below: one
// stuck check ten days old costs one GET, not ten days of pages. After
// days without a run, the default window reaches back to the day of the
// last listing (within the lookback), so that no date stays unlisted. The
// whole window is still listed by the first run, by a run over a window
// the caller names, when rows are in doubt, when the recorded listing is
// dated after now, and once every Options.FullWalkEvery (FullWalkJob),
// which catches a check a list once left out.
//
// # With webhooks
//
// When the service pushes status changes (Options.Webhooks), the ledger
// already holds most of what a walk would learn, but silence proves
// nothing: a delivery may have been dropped. So every row not final is
// still looked at in every run; a final one never is, as without
// webhooks. What changes is how: the run chooses, per range of dates,
// between listing the range and fetching its rows not final by id, so
// that the whole takes the fewest requests by the ledger's counts
// (cheapestRanges, exact over the window's dates): a listed range costs
// a page per 100 rows batchd holds on its dates (at least one), a row
// not final on a date not listed one GET. One stuck old check is thus
// fetched, not paid for with a walk of every date since. The estimate
// counts batchd's checks only, so it is the fewest requests the plan can
// take (Summary.MinCalls); checks made elsewhere, re-reads and retries
// add to Summary.Calls. Ties go to fewer ranges, then to fetching: a GET
// costs exactly one request, a page may spill. Checks created outside
// batchd are not looked for by listing: the ledger records the events of
// checks no row owns, and the run reports them (Options.Events) as
// unknown.
//
// The run still lists the whole window when the caller names the
// window, when rows are in doubt (only a listed check can resolve one),
// when the ledger keeps no such events, and once every
// Options.FullWalkEvery, the ledger remembering the last full walk
// (FullWalkJob): that catches any check a dropped event hid for good.
//
// The reports do not depend on how the rows were read. A row not looked
// at is final, and shown from the ledger; on a ledger that matches the
// service, the status and settlement reports are those a full walk writes.
// Summary.Calls counts every request, so the saving can be watched;
// Summary.MinCalls is the estimate of the plan chosen; for a full walk,
// one pass at the total the list reported plus a GET per row not final
// outside the window.
//
// # Interruption
//
// Every change to the ledger is one row transition, committed on its own;
// reports are written to temporary files and renamed. A run killed at any
// point leaves the ledger consistent and yesterday's (or an earlier run's)
// reports in place, and the next run does the whole job again.
package reconcile
