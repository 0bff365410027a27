// Command ledgerfill loads a ledger with generated valid payments on the
// sandbox's fixture accounts, as if a file had been ingested. Benchmarks
// of submit and reconcile as separate processes start from it:
//
//	go run ./tools/ledgerfill -state DIR -rows 100000 -batches 10
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

func main() {
	dir := flag.String("state", "", "state directory (created if missing)")
	rows := flag.Int("rows", 100000, "rows in all")
	batches := flag.Int("batches", 10, "batches (files) to spread them over")
	flag.Parse()
	if *dir == "" || *rows < 1 || *batches < 1 {
		flag.Usage()
		log.Fatal("ledgerfill: -state, -rows and -batches are required")
	}
	db, err := state.Open(*dir, state.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	per := *rows / *batches
	for b := 0; b < *batches; b++ {
		name := fmt.Sprintf("bench-%d.csv", b)
		l, err := db.BeginBatch(payment.FileMeta{Name: name, SHA256: fmt.Sprintf("ledgerfill-%d-%d", *rows, b)})
		if err != nil {
			log.Fatal(err)
		}
		for i := 0; i < per; i++ {
			n := b*per + i
			p := payment.Payment{
				Amount: money.Cents(100 + n%100000), Memo: fmt.Sprintf("Invoice %d", n),
				Name: fmt.Sprintf("Payee %d", n), Email: "payee@example.com",
				BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", n%22+1),
			}
			if err := l.Add(i+2, p); err != nil {
				log.Fatal(err)
			}
		}
		if _, err := l.Commit(per, 0); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("loaded %d rows in %d batches into %s\n", per**batches, *batches, db.Path())
}
