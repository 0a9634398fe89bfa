package api

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// App is an app object of a kind some ApplicationDefinition declares.
type App struct {
	Ref    ObjectRef
	Origin Origin

	Kind        string
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
	// Reachable is true when the annotation ReachableAnnotation is "true":
	// the tenant opens this app to the VMs of its own ComputePlane (see the
	// egress policy in package render).
	Reachable bool
	// PoolCluster holds the top-level values that attach a worker pool of
	// apps/kubernetes-nodes to a cluster, by field (spec.cluster,
	// spec.clusterReleaseName), where the app sets them as strings: the
	// check stage refuses an app that names a ComputePlane's cluster.
	PoolCluster map[string]string
}

// poolClusterKeys are the values of apps/kubernetes-nodes that name the
// cluster a pool joins.
var poolClusterKeys = []string{"cluster", "clusterReleaseName"}

// DecodeApp reads an app object of a declared kind. It returns, besides the
// app, its spec (nil when it has none): the Helm values of its release,
// which package fleet holds as the text they take there.
func DecodeApp(o Object) (*App, *yaml.Node, Problems) {
	d := o.decoder()
	a := &App{Ref: o.Ref(), Origin: o.Origin, Kind: o.Kind}
	obj := readObject(o.Node, "spec")
	d.keys(obj, "", ObjectFields...)
	md := d.metadata(obj, true)
	a.Name = d.str(get(md, "name"), "metadata.name")
	a.Namespace = d.str(get(md, "namespace"), "metadata.namespace")
	if a.Name != "" && len(validation.IsDNS1035Label(a.Name)) > 0 {
		d.fail("metadata.name", "%q must be a DNS-1035 label: lowercase letters, digits and dashes, starting with a letter", clip(a.Name))
	}
	a.Labels, a.Annotations = d.labels, d.annotations
	for k := range a.Annotations {
		if IsToolAnnotation(k) {
			delete(a.Annotations, k)
		}
	}
	// cozystack-api copies them to the release with a prefix, which must
	// leave them valid keys there.
	for field, m := range map[string]map[string]string{"metadata.labels": a.Labels, "metadata.annotations": a.Annotations} {
		for k := range m {
			if key := wire.ReleaseKeyPrefix + k; !ValidLabelKey(key) {
				d.fail(joinField(field, k), "becomes %q on the app's release, which is not a valid key there: %s; shorten the key", clip(key), content.IsLabelKey(key)[0])
			}
		}
	}
	if v, ok := a.Annotations[ReachableAnnotation]; ok {
		// A misspelt opt-in must not silently leave the app closed, nor an
		// unclear one open it: only the two words are accepted.
		switch v {
		case "true":
			a.Reachable = true
		case "false":
		default:
			d.fail(joinField("metadata.annotations", ReachableAnnotation), "must be \"true\" or \"false\", not %q", v)
		}
	}
	values := d.mappingNode(get(obj, "spec"), "spec")
	if values != nil {
		for i := 0; i+1 < len(values.Content); i += 2 {
			k := resolve(values.Content[i])
			if strings.HasPrefix(k.Value, "_") {
				d.fail(joinField("spec", k.Value), "values key %q is reserved: Cozystack keeps top-level keys starting with '_' for itself", k.Value)
			}
			if slices.Contains(poolClusterKeys, k.Value) {
				if v := resolve(values.Content[i+1]); v.Kind == yaml.ScalarNode {
					if a.PoolCluster == nil {
						a.PoolCluster = map[string]string{}
					}
					a.PoolCluster[joinField("spec", k.Value)] = v.Value
				}
			}
		}
	}
	return a, values, d.problems
}
