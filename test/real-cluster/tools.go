//go:build tools

// Package tools pins the control plane this suite runs: the Kubernetes commands are built from k8s.io/kubernetes at
// the release in go.mod (binaries.ts reads it from there), every k8s.io staging module replaced by the matching v0
// release, as k8s.io/kubernetes itself cannot be required without them.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
