// Package transient tells the errors that time may mend from those it
// will not: a full disk or an I/O error, a timeout, a connection refused
// or reset, and an object store's "try again" (HTTP 5xx, 408 and 429, S3's
// SlowDown and the like, from the S3 client and the drivers that build
// tags gcs and azure add). A task that
// fails with one is retried in the same delivery (see package queue)
// rather than spending a delivery.
package transient

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// errnos are the system errors that time may mend: space, I/O, and the
// network between this process and a server.
var errnos = [...]syscall.Errno{
	syscall.ENOSPC, syscall.EDQUOT, syscall.EIO,
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN, syscall.ENETRESET,
}

// s3Codes are the S3 error codes that mean "try again" (AWS's retryable
// codes, which S3-compatible servers use too).
var s3Codes = map[string]bool{
	"SlowDown": true, "ServiceUnavailable": true, "InternalError": true, "RequestTimeout": true,
	"RequestTimeoutException": true, "Throttling": true, "ThrottlingException": true,
	"RequestThrottled": true, "TooManyRequestsException": true, "PriorRequestNotComplete": true,
	"OperationAborted": true, "BandwidthLimitExceeded": true, "EC2ThrottledException": true,
}

// Is reports whether err (or an error it wraps) is one that time may
// mend.
func Is(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range errnos {
		if errors.Is(err, e) {
			return true
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true
	}
	if cloudRetry(err) {
		return true
	}
	if code := httpStatus(err); code != 0 {
		return retryStatus(code)
	}
	if api, ok := errors.AsType[interface {
		error
		ErrorCode() string
	}](err); ok && s3Codes[api.ErrorCode()] {
		return true
	}
	return grpcRetry(err)
}

// retryStatus tells whether an HTTP status asks the client to try again.
func retryStatus(code int) bool {
	return code >= 500 && code != 501 && code != 505 || code == 408 || code == 429
}

// httpStatus is the HTTP status of the response an object store's error
// came with, or 0: AWS (smithy), Google (googleapi, gax) and Azure (azcore)
// each carry it their own way. The Google and Azure types are in the
// files that build tags gcs and azure add with their drivers.
func httpStatus(err error) int {
	if e, ok := errors.AsType[interface {
		error
		HTTPStatusCode() int
	}](err); ok {
		return e.HTTPStatusCode()
	}
	if e, ok := errors.AsType[interface {
		error
		HTTPCode() int
	}](err); ok && e.HTTPCode() > 0 {
		return e.HTTPCode()
	}
	if code := googleStatus(err); code != 0 {
		return code
	}
	return azureStatus(err)
}
