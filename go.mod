module github.com/batchd/batchd

go 1.26.8

require (
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/gocarina/gocsv v0.0.0-20240520201108-78e41c74b4b1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kr/fs v0.1.0 // indirect
	github.com/pkg/sftp v1.13.12 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/rickar/cal/v2 v2.1.13 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
