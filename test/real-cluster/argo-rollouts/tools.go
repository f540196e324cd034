//go:build tools

// Package tools pins the Argo Rollouts controller the real-cluster suite runs (argo-rollouts.test.ts): its main
// package built from github.com/argoproj/argo-rollouts at the release in go.mod (argo-rollouts.ts reads it from there).
package tools

import (
	_ "github.com/argoproj/argo-rollouts/cmd/rollouts-controller"
)
