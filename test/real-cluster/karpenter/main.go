// Command karpenter-oracle answers, with Karpenter's own code, whether Pods are compatible with NodePools: the
// real-cluster suite's oracle for lib/capacity (capacity-karpenter.test.ts). It reads one JSON request on stdin,
// {"cases": [{"pod": <core/v1 Pod>, "nodePool": <karpenter.sh/v1 NodePool>}, ...]}, and writes one JSON answer on
// stdout, {"answers": [...]}, one per case, in order. Each answer holds:
//   - accepted: the Pod passes the provisioner's Validate (sigs.k8s.io/karpenter pkg/controllers/provisioning/
//     provisioner.go), without which Karpenter never provisions for it;
//   - terms: for each required node affinity term (or the nodeSelector alone when there is none), whether the
//     NodePool's NodeClaimTemplate requirements are Compatible with the Pod's strict requirements, as the scheduler's
//     NodeClaim.CanAdd checks them (pkg/controllers/provisioning/scheduling/nodeclaim.go);
//   - tolerated: whether the template's taints tolerate the Pod once preference relaxation has added its toleration
//     of PreferNoSchedule taints (pkg/controllers/provisioning/scheduling/preferences.go).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	provisioningscheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	// The AWS provider's init adds its well-known labels to karpv1.WellKnownLabels and its restricted domain to
	// karpv1.RestrictedLabelDomains, as they are in the AWS provider's controller.
	_ "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

type request struct {
	Cases []pair `json:"cases"`
}

type pair struct {
	Pod      corev1.Pod      `json:"pod"`
	NodePool karpv1.NodePool `json:"nodePool"`
}

type termAnswer struct {
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason,omitempty"`
}

type answer struct {
	Accepted    bool         `json:"accepted"`
	Refusal     string       `json:"refusal,omitempty"`
	Terms       []termAnswer `json:"terms"`
	Tolerated   bool         `json:"tolerated"`
	Untolerated string       `json:"untolerated,omitempty"`
}

func judge(ctx context.Context, validator *provisioning.Provisioner, c pair) answer {
	var result answer
	if err := validator.Validate(ctx, c.Pod.DeepCopy()); err != nil {
		result.Refusal = err.Error()
	} else {
		result.Accepted = true
	}
	template := provisioningscheduling.NewNodeClaimTemplate(&c.NodePool)
	for _, term := range requiredTerms(&c.Pod) {
		pod := c.Pod.DeepCopy()
		if term != nil {
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = []corev1.NodeSelectorTerm{*term}
		}
		err := template.Requirements.Compatible(scheduling.NewStrictPodRequirements(pod), scheduling.AllowUndefinedWellKnownLabels)
		if err != nil {
			result.Terms = append(result.Terms, termAnswer{Reason: err.Error()})
		} else {
			result.Terms = append(result.Terms, termAnswer{Compatible: true})
		}
	}
	relaxed := c.Pod.DeepCopy()
	preferences := &provisioningscheduling.Preferences{ToleratePreferNoSchedule: true}
	for preferences.Relax(ctx, relaxed) {
	}
	if err := scheduling.Taints(template.Spec.Taints).ToleratesPod(relaxed); err != nil {
		result.Untolerated = err.Error()
	} else {
		result.Tolerated = true
	}
	return result
}

// requiredTerms lists the Pod's required node affinity terms, or one nil entry for a Pod without any: the
// scheduler's relaxation tries them one at a time, in order (Preferences.removeRequiredNodeAffinityTerm).
func requiredTerms(pod *corev1.Pod) []*corev1.NodeSelectorTerm {
	affinity := pod.Spec.Affinity
	if affinity == nil || affinity.NodeAffinity == nil || affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
		len(affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		return []*corev1.NodeSelectorTerm{nil}
	}
	terms := affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	result := make([]*corev1.NodeSelectorTerm, len(terms))
	for i := range terms {
		result[i] = &terms[i]
	}
	return result
}

func main() {
	var in request
	decoder := json.NewDecoder(os.Stdin)
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&in); err != nil {
		fmt.Fprintf(os.Stderr, "karpenter-oracle: reading the request: %v\n", err)
		os.Exit(2)
	}
	ctx := context.Background()
	// Validate reads nothing but the Pod for a Pod without volumes; the other dependencies stay unset.
	validator := provisioning.NewProvisioner(nil, nil, nil, nil, nil, nil, nil)
	answers := make([]answer, len(in.Cases))
	for i, c := range in.Cases {
		answers[i] = judge(ctx, validator, c)
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string][]answer{"answers": answers}); err != nil {
		fmt.Fprintf(os.Stderr, "karpenter-oracle: writing the answer: %v\n", err)
		os.Exit(2)
	}
}
