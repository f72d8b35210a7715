// Command coordinator runs a neardup dedup job: it plans the input into
// chunks, puts the tasks on NATS JetStream, and clusters the verified pairs.
// Without --nats it starts an embedded NATS server and in-process workers.
//
//	coordinator --out DIR [flags] INPUT...           run a job
//	coordinator compare --out DIR [flags] INPUT...   MinHash and SimHash side by side
//	coordinator params [flags]                       show the banding plan for a threshold
//
// Flags may come before or after the arguments; each is also read from
// the environment variable NEARDUP_<FLAG> (--help names them).
package main

import (
	"os"

	"github.com/neardup/neardup/internal/cli"
)

func main() { os.Exit(cli.Main("coordinator", os.Args[1:], cli.Coordinator(), os.Stdout, os.Stderr)) }
