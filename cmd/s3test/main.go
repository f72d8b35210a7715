// Command s3test runs neardup's S3 test server (package
// internal/s3test, on github.com/johannesboyne/gofakes3) as a program,
// keeping its objects in a directory: the S3 service of the compose
// cluster (docker-compose.cluster.yml) where no MinIO image can be pulled.
// It is for tests, not for data anyone needs.
//
//	s3test [-addr :9000] [-dir /data] [-bucket NAME]...
//	s3test mb [-timeout 1m] ENDPOINT BUCKET...
//
// The server makes each -bucket unless it exists, and serves what an
// earlier server stored in -dir. With AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY in its environment it accepts only requests signed
// with that key. SIGTERM or SIGINT stops it once the requests in flight
// are done (at most 8 seconds).
//
// mb makes each bucket on the server at ENDPOINT unless it exists (as `mc
// mb --ignore-existing`), signed with the key of the same environment
// variables, asking again until the server answers or -timeout passes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/neardup/neardup/internal/s3test"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "mb" {
		err = mb(os.Args[2:])
	} else {
		err = serve(os.Args[1:])
	}
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "s3test:") {
			msg = "s3test: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

// envKey is the key of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or
// the zero Key when neither is set.
func envKey() (s3test.Key, error) {
	key := s3test.Key{ID: os.Getenv("AWS_ACCESS_KEY_ID"), Secret: os.Getenv("AWS_SECRET_ACCESS_KEY")}
	if (key.ID == "") != (key.Secret == "") {
		return key, errors.New("set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither")
	}
	return key, nil
}

// buckets is a repeatable flag.
type buckets []string

func (b *buckets) String() string     { return fmt.Sprint(*b) }
func (b *buckets) Set(v string) error { *b = append(*b, v); return nil }

func serve(args []string) error {
	fs := flag.NewFlagSet("s3test", flag.ContinueOnError)
	addr := fs.String("addr", ":9000", "address to serve on")
	dir := fs.String("dir", "/data", "directory of the buckets and objects")
	var names buckets
	fs.Var(&names, "bucket", "a bucket to make unless it exists (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	key, err := envKey()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := s3test.OnDisk(*dir, func(format string, a ...any) { log.Warn(fmt.Sprintf(format, a...)) }, names...)
	if err != nil {
		return err
	}
	if key != (s3test.Key{}) {
		srv.RequireKey(key)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := srv.Listen(*addr); err != nil {
		return err
	}
	log.Info("serving", "addr", *addr, "dir", *dir, "buckets", names, "signed", key != (s3test.Key{}))
	<-ctx.Done()
	log.Info("stopping: finishing the requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

func mb(args []string) error {
	fs := flag.NewFlagSet("s3test mb", flag.ContinueOnError)
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("usage: s3test mb [-timeout D] ENDPOINT BUCKET...")
	}
	key, err := envKey()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := s3test.MakeBuckets(ctx, fs.Arg(0), key, fs.Args()[1:]...); err != nil {
		return err
	}
	fmt.Printf("buckets %q at %s\n", fs.Args()[1:], fs.Arg(0))
	return nil
}
