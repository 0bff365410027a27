package webhook

import "time"

// RefusalLogEvery is the least time between two log lines about refused
// requests of one outcome. A flood of forged or misrouted requests (2,000
// wrong secrets in a second) must not flood the journal: each refusal is
// counted in the metrics (Observe), and the log says, once a minute, how
// many there were (a logevery.Gate).
const RefusalLogEvery = time.Minute
