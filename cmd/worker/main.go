// Command worker runs neardup tasks from a NATS JetStream work queue, for
// any job whose coordinator uses the same server. Every worker must see the
// jobs' output directories at the same paths as their coordinators.
//
//	worker --nats nats://host:4222 [--slots N]
//
// Flags may come before or after the arguments; each is also read from
// the environment variable NEARDUP_<FLAG> (--help names them).
package main

import (
	"os"

	"github.com/neardup/neardup/internal/cli"
)

func main() { os.Exit(cli.Main("worker", os.Args[1:], cli.Worker(), os.Stdout, os.Stderr)) }
