// Package deploy holds the test of the deployment manifests under
// kubernetes/: each is decoded strictly into the Kubernetes API's Go
// types, offline, and the references between them are checked. It is a
// module of its own so that neardup's module does not require the
// Kubernetes API; scripts/test runs it.
package deploy
