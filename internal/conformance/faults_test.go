package conformance

import (
	"errors"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestLostAnswer: the sandbox stores a check and closes the connection
// without an answer. The client must say Ambiguous (never Retryable, which
// would invite a duplicate payment), and the check is found by its label,
// number and amount, as batchd's resolver looks for it. In quirks mode the
// number comes back without its leading zeros, so a lookup must compare
// check numbers as numbers.
func TestLostAnswer(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{DropRate: 1, Seed: 7})
		c := e.client(keyA)
		req := validRequest("lost-answer")
		req.Number, req.Amount = "0031337", 4299
		_, err := c.CreateCheck(t.Context(), req)
		if err == nil {
			t.Fatal("CreateCheck succeeded although the sandbox dropped the answer")
		}
		if cls := apiwire.ClassOf(err); cls != apiwire.Ambiguous {
			t.Fatalf("ClassOf = %s, want ambiguous (%v)", cls, err)
		}
		if st := e.sb.Stats(); st.Drops != 1 || st.Creates != 1 {
			t.Errorf("sandbox stats %+v, want one create, one drop", st)
		}
		found := listByLabel(t, c, "lost-answer")
		if len(found) != 1 {
			t.Fatalf("list by label finds %d checks, want the one whose answer was lost", len(found))
		}
		got := found[0]
		if got.Number != e.number("0031337") || got.Amount != 4299 || got.Status != "in_process" || got.Label != "lost-answer" {
			t.Errorf("found check %+v, want number %s, 42.99, in_process", got, e.number("0031337"))
		}
		if e.quirks && got.Number == req.Number {
			t.Errorf("quirks mode: number %q came back as sent, want it without leading zeros", got.Number)
		}
		if !sameNumber(got.Number, req.Number) {
			t.Errorf("number %q is not the number %q sent", got.Number, req.Number)
		}
		sameCheck(t, get(t, c, got.CheckID), got)
	})
}

// TestInjectedErrors: a 500 or 503 has no effect. For a create the client
// cannot know that and says Ambiguous; for a read it says Retryable.
func TestInjectedErrors(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{ErrorRate: 1, Seed: 3})
		c := e.client(keyA)
		for i := 0; i < 4; i++ {
			_, err := c.CreateCheck(t.Context(), validRequest("injected"))
			var ee *apiwire.Error
			if cls := apiwire.ClassOf(err); cls != apiwire.Ambiguous {
				t.Errorf("create: ClassOf = %s, want ambiguous (%v)", cls, err)
			} else if errors.As(err, &ee) && ee.Status != 500 && ee.Status != 503 {
				t.Errorf("create: HTTP %d, want 500 or 503", ee.Status)
			}
			_, err = c.GetCheck(t.Context(), unknownID)
			if cls := apiwire.ClassOf(err); cls != apiwire.Retryable {
				t.Errorf("get: ClassOf = %s, want retryable (%v)", cls, err)
			}
		}
		if st := e.sb.KeyStats(keyA); st.Checks != 0 {
			t.Errorf("injected errors stored %d checks, want 0", st.Checks)
		}
	})
}
