//go:build sizefloor

// Command sizefloor measures a floor, nothing more: the size of a static
// binary that links only the modules every coordinator build must (the
// embedded nats-server, nats.go's JetStream, parquet-go, the S3 client,
// klauspost's zstd and gzip, the HTML charsets, the Prometheus client,
// xxhash, errgroup), each called as neardup calls it, and none of
// neardup's own code. docs/operations.md, "What each build holds and
// costs", compares it with the coordinator:
//
//	CGO_ENABLED=0 go build -trimpath -tags sizefloor -o /tmp/sizefloor ./scripts/sizefloor
//
// With -tags sizefloor,template it also executes an html/template, which
// the report uses: the linker then keeps every exported method of every
// type that can reach an interface.
package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/parquet-go/parquet-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/html/charset"
	"golang.org/x/sync/errgroup"
)

type row struct {
	ID   string `parquet:"id"`
	Doc  int64  `parquet:"doc"`
	Hash uint64 `parquet:"hash"`
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	srv, err := server.NewServer(&server.Options{JetStream: true, StoreDir: os.TempDir(), Port: -1})
	if err != nil {
		return err
	}
	go srv.Start()
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"}); err == nil {
		_, _ = kv.Put(ctx, "k", []byte("v"))
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.Compression(&parquet.Zstd))
	if _, err := w.Write([]row{{"a", 1, xxhash.Sum64String("a")}}); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	rows := make([]row, 1)
	_, _ = parquet.NewGenericReader[row](bytes.NewReader(buf.Bytes())).Read(rows)
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		return err
	}
	packed := zw.EncodeAll(buf.Bytes(), nil)
	gw := gzip.NewWriter(&buf)
	if err := gw.Close(); err != nil {
		return err
	}
	cr, err := charset.NewReader(strings.NewReader("x"), "text/html; charset=latin1")
	if err != nil {
		return err
	}
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1")})
	_, _ = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	_, _ = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	_, _ = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("b")})
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "x"}))
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	var g errgroup.Group
	g.Go(func() error { return execTemplate(rows) })
	fmt.Println(rows, len(packed), cr != nil)
	return g.Wait()
}
