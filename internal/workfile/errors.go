package workfile

import "errors"

// ErrCorrupt marks a work file, or a range of one, that does not match
// what its writer recorded (its size, checksum or row count) or does not
// decode as its format: damaged, truncated, forged or of another job.
var ErrCorrupt = errors.New("work file does not match what its writer recorded")
