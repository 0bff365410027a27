// Package conformance holds the tests that run batchd's API clients, the
// eCheck client (internal/echeck) and the ACH client (internal/ach),
// against its sandbox emulator (internal/sandbox), over real HTTP on
// loopback. The ACH tests (ach_*_test.go) cover every /ach/v2 endpoint,
// every funding-source transition of spec §3.3, every error of §7 and the
// 410 of micro-deposit initiation from 2026-06-08 by the sandbox clock.
//
// The client and the sandbox are written from the same specification by
// different hands and never import each other, so that each is an
// independent reading of it. Only these tests see both. They check the
// specification's promises end to end: every endpoint, the fixture table
// of section 2.8, every field rule and limit at its boundary, the error
// statuses and how the client classifies them, exact amounts, the check
// lifecycle, list paging, and a create whose answer is lost.
//
// Every test runs twice, as the subtests "exact" and "quirks": against the
// sandbox that echoes exactly, and against the sandbox with
// Options.Quirks, which answers like a less tidy service (numbers without
// leading zeros, a substring label filter, float amounts, paging numbers
// as numbers or strings, its own account mask, an edit without phone
// keeping it). Where an assertion depends on the exact echo, the quirks
// run asserts the quirky behaviour instead.
//
// Where the client refuses input before sending it, the tests also send the
// same input to the sandbox with net/http, so that both sides of every rule
// are covered. The package holds no code outside its tests.
package conformance
