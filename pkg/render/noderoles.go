package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeRoleLabelPrefix is the label key apps/kubernetes gives a node group's
// roles: every role r of nodeGroups.<group>.roles becomes the label
// node-role.kubernetes.io/<r> of the group's VMs, machines and nodes
// (templates/cluster.yaml at Cozystack 3c780acd), written unquoted.
const NodeRoleLabelPrefix = "node-role.kubernetes.io/"

// nodeRoleProblems returns, by field path below root, what is wrong with the
// roles of the node groups in values: each must be a string that makes
// node-role.kubernetes.io/<role> a valid label key, as the API server checks
// it (k8s.io/apimachinery's validation.IsQualifiedName). The chart writes the
// role into a label key without quoting it, so anything else is at best a
// failed install and at worst more YAML: a role such as
// `x: ""\n  kamaji.clastix.io/name: other` would add labels of its choosing
// to the workers' VMs.
func nodeRoleProblems(values map[string]any, root string) map[string]string {
	groups, _ := valueAt(values, "nodeGroups").(map[string]any)
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g, _ := groups[name].(map[string]any)
		roles, ok := g["roles"].([]any)
		if !ok {
			continue
		}
		for i, r := range roles {
			field := fieldPath(root, joinPath([]string{"nodeGroups", name, "roles"})) + "[" + strconv.Itoa(i) + "]"
			s, ok := r.(string)
			if !ok {
				out[field] = fmt.Sprintf("a node role must be a string, not %v: the chart writes it into the label key %s<role>", r, NodeRoleLabelPrefix)
				continue
			}
			if errs := validation.IsQualifiedName(NodeRoleLabelPrefix + s); len(errs) > 0 {
				out[field] = fmt.Sprintf("node role %q does not make %s<role> a valid label key, which the chart writes it into unquoted: a role is at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", s, NodeRoleLabelPrefix)
			}
		}
	}
	return out
}
