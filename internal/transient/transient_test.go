package transient

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Err is an error as the AWS SDK returns it for an S3 response of
// status with the error code.
func s3Err(status int, code string) error {
	resp := &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "m"},
	}
	return &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject",
		Err: &awshttp.ResponseError{ResponseError: resp, RequestID: "r"}}
}

// dialErr is a failed dial as net/http reports it.
func dialErr(errno syscall.Errno) error {
	return &url.Error{Op: "Get", URL: "http://127.0.0.1:9/b/k",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// isCase is an error and whether Is should report it transient.
type isCase struct {
	name string
	err  error
	want bool
}

// wrap wraps err as the storage package does.
func wrap(err error) error { return fmt.Errorf("storage: open bands/x: %w", err) }

// checkIs checks Is on every case.
func checkIs(t *testing.T, cases []isCase) {
	t.Helper()
	for _, tt := range cases {
		if got := Is(tt.err); got != tt.want {
			t.Errorf("%s: Is(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestIs checks the errors of every build: the system's, the network's
// and the S3 client's. The Google and Azure errors are checked in builds
// with their tags (is_gcs_test.go, is_azure_test.go).
func TestIs(t *testing.T) {
	checkIs(t, []isCase{
		{"nil", nil, false},
		{"disk full", wrap(&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{"quota", wrap(syscall.EDQUOT), true},
		{"I/O error", syscall.EIO, true},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"file deadline", wrap(os.ErrDeadlineExceeded), true},
		{"connection refused", wrap(dialErr(syscall.ECONNREFUSED)), true},
		{"connection reset", wrap(&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), true},
		{"broken pipe", wrap(syscall.EPIPE), true},
		{"host unreachable", wrap(dialErr(syscall.EHOSTUNREACH)), true},
		{"net timeout", wrap(&url.Error{Op: "Get", URL: "u", Err: timeoutErr{}}), true},
		{"S3 503 SlowDown", wrap(s3Err(503, "SlowDown")), true},
		{"S3 500 InternalError", wrap(s3Err(500, "InternalError")), true},
		{"S3 503 without a code", wrap(s3Err(503, "")), true},
		{"S3 SlowDown without a status", wrap(&smithy.GenericAPIError{Code: "SlowDown"}), true},
		{"S3 429", wrap(s3Err(429, "TooManyRequests")), true},
		{"S3 404 NoSuchKey", wrap(s3Err(404, "NoSuchKey")), false},
		{"S3 403 AccessDenied", wrap(s3Err(403, "AccessDenied")), false},
		{"S3 501 NotImplemented", wrap(s3Err(501, "NotImplemented")), false},
		{"permission", wrap(&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}), false},
		{"missing file", wrap(fs.ErrNotExist), false},
		{"canceled", wrap(context.Canceled), false},
		{"corrupt", errors.New("checksum mismatch"), false},
	})
}
