//go:build tools

// Package tools pins the Kyverno admission controller the real-cluster suite runs (kyverno.test.ts): its main package
// built from github.com/kyverno/kyverno at the release in go.mod (kyverno.ts reads it from there).
package tools

import (
	_ "github.com/kyverno/kyverno/cmd/kyverno"
)
