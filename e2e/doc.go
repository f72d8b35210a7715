// Package e2e holds neardup's end-to-end tests: the built commands run as
// separate processes on loopback NATS, the README's sample command, and the
// output files read back by independent readers (Apache Arrow's Parquet
// reader and DuckDB).
package e2e
