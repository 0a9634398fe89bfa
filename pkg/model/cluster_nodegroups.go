package model

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeRoleLabelPrefix is the label key apps/kubernetes gives a node group's
// roles: every role r of nodeGroups.<group>.roles becomes the label
// node-role.kubernetes.io/<r> of the group's VMs, machines and nodes
// (templates/cluster.yaml at Cozystack 3c780acd), written unquoted.
const NodeRoleLabelPrefix = "node-role.kubernetes.io/"

// The chart writes a node group's name and several of its strings into its
// templates without quoting them (templates/cluster.yaml at Cozystack
// 3c780acd): the group's name into object names and labels, each role into
// a label key, each GPU's name as a VM's deviceName, instanceType as the
// name of a VirtualMachineClusterInstancetype, storageClass as a
// DataVolume's storageClassName. A value that is not a name of its kind
// is at best a failed install and at worst more YAML: a GPU name such as
// "x\n  nodeSelector: {...}" adds fields of its choosing to the workers'
// VMs. So each must be a name of the kind it stands for, as the API server
// checks that kind's names (k8s.io/apimachinery/pkg/util/validation), whatever
// the knob schema says. Line breaks and other control characters are
// refused in every knob string by the knob schema's check (pkg/knobs).
var nodeGroupNames = []struct {
	field string // below nodeGroups.<group>; "[]" marks a list
	what  string
	check func(string) []string
}{
	{"roles[]", "a node role, which the chart writes unquoted into the label key " + NodeRoleLabelPrefix + "<role>: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
		func(s string) []string { return validation.IsQualifiedName(NodeRoleLabelPrefix + s) }},
	{"gpus[].name", "a GPU's resource name (as nvidia.com/AD102GL_L40S), which the chart writes unquoted as the VM's deviceName: a qualified name, an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.'",
		validation.IsQualifiedName},
	{"instanceType", "the name of a VirtualMachineClusterInstancetype (as u1.medium), which the chart writes unquoted: a DNS subdomain, lower-case letters, digits, '-' and '.', or empty",
		emptyOr(validation.IsDNS1123Subdomain)},
	{"storageClass", "the name of a StorageClass, which the chart writes unquoted: a DNS subdomain, lower-case letters, digits, '-' and '.', or empty",
		emptyOr(validation.IsDNS1123Subdomain)},
}

// emptyOr admits "", which the chart reads as unset (sized by resources, the
// application's storage class), and checks the rest.
func emptyOr(check func(string) []string) func(string) []string {
	return func(s string) []string {
		if s == "" {
			return nil
		}
		return check(s)
	}
}

// nodeGroupProblems returns, by field path below root, what is wrong with
// the node groups in values: each group's name must be a DNS label (the
// chart makes object names and label values of it), and each of the strings
// of nodeGroupNames a name of its kind.
func nodeGroupProblems(values map[string]any, root string) map[string]string {
	groups, _ := valueAt(values, "nodeGroups").(map[string]any)
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		group := valuesPath(root, joinPath([]string{"nodeGroups", name}))
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			out[group] = fmt.Sprintf("node group name %q is not a DNS label, which the chart writes unquoted into object names and labels: at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit", name)
			continue
		}
		g, _ := groups[name].(map[string]any)
		for _, n := range nodeGroupNames {
			for field, v := range namedValues(g, n.field) {
				path := group + "." + field
				s, ok := v.(string)
				if !ok {
					out[path] = fmt.Sprintf("must be a string, not %v: it is %s", v, n.what)
					continue
				}
				if errs := n.check(s); len(errs) > 0 {
					out[path] = fmt.Sprintf("%q is not %s", s, n.what)
				}
			}
		}
	}
	return out
}

// namedValues returns the values at path below g, by their field path: a
// path of plain keys, where "[]" after a key means every item of a list.
// Missing fields and fields of another shape are left out (the schema
// reports those).
func namedValues(g map[string]any, path string) map[string]any {
	out := map[string]any{}
	key, rest, _ := strings.Cut(path, ".")
	name := strings.TrimSuffix(key, "[]")
	v, ok := g[name]
	if !ok {
		return out
	}
	found := map[string]any{name: v}
	if name != key {
		found = map[string]any{}
		items, _ := v.([]any)
		for i, item := range items {
			found[name+"["+strconv.Itoa(i)+"]"] = item
		}
	}
	for at, item := range found {
		if rest == "" {
			out[at] = item
		} else if m, ok := item.(map[string]any); ok {
			for f, w := range namedValues(m, rest) {
				out[at+"."+f] = w
			}
		}
	}
	return out
}
