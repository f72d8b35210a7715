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

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

func TestIs(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("storage: open bands/x: %w", err) }
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
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
		{"GCS 503", wrap(&googleapi.Error{Code: 503}), true},
		{"GCS 429", wrap(&googleapi.Error{Code: 429}), true},
		{"GCS 404", wrap(&googleapi.Error{Code: 404}), false},
		{"Azure 500", wrap(&azcore.ResponseError{StatusCode: 500, ErrorCode: "InternalError"}), true},
		{"Azure 503 ServerBusy", wrap(&azcore.ResponseError{StatusCode: 503, ErrorCode: "ServerBusy"}), true},
		{"Azure 409", wrap(&azcore.ResponseError{StatusCode: 409, ErrorCode: "BlobAlreadyExists"}), false},
		{"gRPC unavailable", wrap(status.Error(codes.Unavailable, "x")), true},
		{"gRPC not found", wrap(status.Error(codes.NotFound, "x")), false},
		{"permission", wrap(&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}), false},
		{"missing file", wrap(fs.ErrNotExist), false},
		{"canceled", wrap(context.Canceled), false},
		{"corrupt", errors.New("checksum mismatch"), false},
	} {
		if got := Is(tt.err); got != tt.want {
			t.Errorf("%s: Is(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
