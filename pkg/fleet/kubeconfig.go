package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// AdminKubeconfigSuffix ends the name of every admin kubeconfig Secret
// Kamaji writes for a cluster of apps/kubernetes (KubeconfigSecret).
const AdminKubeconfigSuffix = "-admin-kubeconfig"

// CheckKubeconfigReferences refuses an object that reaches the output as it
// is (it passes through, or is kept with keepInputs) when it sets
// spec.kubeConfig or names a Secret ending in -admin-kubeconfig anywhere
// (SPEC 5): such an object would reach a cluster with its super-admin
// credentials, or read or overwrite them, without this function having
// rendered it, and the management-plane guard refuses it on the cluster
// anyway. Every string value is looked at, since a Secret is named in many
// fields (secretRef.name, secretName, a Secret's own metadata.name, ...).
func CheckKubeconfigReferences(o api.Object) api.Problems {
	if o.Node == nil {
		return nil
	}
	var problems api.Problems
	if kc := yamlnode.Get(yamlnode.Get(o.Node, "spec"), "kubeConfig"); !yamlnode.IsNull(kc) {
		problems = append(problems, api.Errorf(o.Ref(), o.Origin, "spec.kubeConfig",
			"an object that reaches the output as it is (it passes through, or is kept with keepInputs) must not set spec.kubeConfig: it would reach another cluster with whatever credentials it names, and the management-plane guard refuses it on the cluster; a release that runs on a ComputePlane is rendered by this function from its app object (set the app's definition to placement: ComputePlane)"))
	}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n == nil {
			return
		}
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		// An alias repeats what its anchor holds: looked at once.
		if n == nil || seen[n] {
			return
		}
		if n.Anchor != "" {
			seen[n] = true
		}
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				p := path
				if n.Kind == yaml.SequenceNode {
					p = path + "[" + strconv.Itoa(i) + "]"
				}
				walk(c, p)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], fieldPath(path, yamlnode.Resolve(n.Content[i]).Value))
			}
		case yaml.ScalarNode:
			if v := strings.TrimSpace(n.Value); strings.HasSuffix(v, AdminKubeconfigSuffix) && path != "spec.kubeConfig.secretRef.name" {
				problems = append(problems, api.Errorf(o.Ref(), o.Origin, path,
					"names %s, which looks like the admin kubeconfig Secret of a cluster (Kamaji writes <release>%s, super-admin of that cluster): an object that reaches the output as it is (it passes through, or is kept with keepInputs) must not read, mount or replace it; remove the reference", quoteName(v), AdminKubeconfigSuffix))
			}
		}
	}
	walk(o.Node, "")
	return problems
}

// fieldPath appends a key to a field path, keys that hold dots, brackets
// or spaces in brackets (metadata.labels[app.kubernetes.io/name]).
func fieldPath(path, key string) string {
	if strings.ContainsAny(key, ".[] ") || key == "" {
		return path + "[" + api.Printable(key) + "]"
	}
	if path == "" {
		return api.Printable(key)
	}
	return path + "." + api.Printable(key)
}

func quoteName(s string) string { return fmt.Sprintf("%q", api.Printable(s)) }

// ClusterCredentials are the Secrets that give power over a cluster of
// apps/kubernetes released as release: the admin kubeconfig (key
// super-admin.svc), Kamaji's admin.conf (<release>-kubeconfig, key value)
// and the cluster's CA with its key (<release>-ca).
// TODO(h18a): the full table (Kamaji's sources, the chart's templates).
func ClusterCredentials(release string) []string {
	return []string{KubeconfigSecret(release), release + "-kubeconfig", release + "-ca"}
}
