// Package payment is batchd's domain core: what a payment is, what the
// ledger remembers of it, what the service says of its check, the one rule
// that decides "this check is this row's", and the interfaces the jobs need
// of their adapters (the ledger, the service and the outbox).
//
// Every job (ingest, submit, reconcile) depends on this package, and the
// adapters implement its interfaces: internal/state (the bbolt ledger),
// internal/echeck (the service's HTTP API) and internal/remote (the SFTP
// outbox). It imports nothing of batchd's but internal/money, the leaf
// package of exact cents, so that a second ledger backend or a second
// service needs no change here. The model is litestream's root package.
package payment
