package report

import (
	"reflect"
	"testing"
)

func TestColumnsReadsEachKind(t *testing.T) {
	got := Columns("line:int", "name", "amount:money", "day:date", "sent:datetime", "note:text")
	want := []Column{{"line", Int}, {"name", Text}, {"amount", Money}, {"day", Date}, {"sent", DateTime}, {"note", Text}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Columns = %v, want %v", got, want)
	}
}

func TestColumnsPanicsOnAnUnknownKind(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Columns accepted the kind \"float\"")
		}
	}()
	Columns("amount:float")
}
