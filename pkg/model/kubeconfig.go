package model

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
// spec.kubeConfig or names a credential of a cluster anywhere (docs/inputs-outputs.md): such
// an object would reach a cluster with its super-admin credentials, or read
// or overwrite them, without this function having rendered it, and the
// management-plane guard refuses it on the cluster anyway. The credentials
// are every Secret of ClusterCredentials (and the per-machine bootstrap
// Secrets) of a ComputePlane under either delivery (ClusterReleases), and
// every Secret ending in -admin-kubeconfig, whoever's cluster it is.
//
// Every string value is looked at, since a Secret is named in many fields
// (secretRef.name, secretName, valuesFrom, substituteFrom, env, a Secret's
// own metadata.name, ...), and each is split into the words a name can be
// made of, so that a name inside a longer text is found too (a
// post-renderer's patch, a script). A string with escapes or tags (\x61,
// !!binary) is also read as the YAML or JSON document it may be (a patch,
// an annotation) and its strings looked at the same way, and a !!binary
// scalar as the string it stands for, so that neither hides a name.
func CheckKubeconfigReferences(o api.Object) api.Problems {
	if o.Node == nil {
		return nil
	}
	var problems api.Problems
	if kc := yamlnode.Get(yamlnode.Get(o.Node, "spec"), "kubeConfig"); !yamlnode.IsNull(kc) {
		problems = append(problems, api.Errorf(o.Ref(), o.Origin, "spec.kubeConfig",
			"an object that reaches the output as it is (it passes through, or is kept with keepInputs) must not set spec.kubeConfig: it would reach another cluster with whatever credentials it names, and the management-plane guard refuses it on the cluster; a release that runs on a ComputePlane is rendered by this function from its app object (set the app's definition to placement: ComputePlane)"))
	}
	reported := map[string]bool{}
	walkStrings(o.Node, "", 0, func(path, value string) {
		if path == "spec.kubeConfig.secretRef.name" || reported[path] {
			return
		}
		if name, why := credentialIn(value); name != "" {
			reported[path] = true
			problems = append(problems, api.Errorf(o.Ref(), o.Origin, path,
				"names %s, %s: an object that reaches the output as it is (it passes through, or is kept with keepInputs) must not read, mount or replace it; remove the reference", quoteName(name), why))
		}
	})
	return problems
}

// maxEmbeddedDepth bounds how deep documents inside strings are read (a
// patch holding a script holding a manifest).
const maxEmbeddedDepth = 2

// walkStrings calls visit with the field path and value of every string
// scalar below n, once per anchor, and also with those of the documents a
// string holds (reported at the string's path).
func walkStrings(n *yaml.Node, path string, embedded int, visit func(path, value string)) {
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
			visit(path, n.Value)
			// sigs.k8s.io/yaml reads a !!binary scalar as the string of its
			// bytes: that string is what is applied.
			if n.ShortTag() == yamlnode.TagBinary {
				var s string
				if n.Decode(&s) == nil {
					visit(path, s)
				}
			}
			if embedded < maxEmbeddedDepth && holdsDocument(n.Value) {
				dec := yaml.NewDecoder(strings.NewReader(n.Value))
				for {
					var doc yaml.Node
					if dec.Decode(&doc) != nil {
						break
					}
					walkStrings(&doc, path, embedded+1, func(_, v string) { visit(path, v) })
				}
			}
		}
	}
	walk(n, path)
}

// holdsDocument reports whether a string that may be a YAML or JSON
// document (a patch, an annotation) must be read as one to see its strings
// as its reader does: only escapes (\x61, \u0061) and tags (!!binary) make
// them differ from the words of the text, which are looked at anyway.
func holdsDocument(s string) bool { return strings.ContainsAny(s, "\\!") }

// credentialIn returns the first word of s that names a cluster credential,
// and what it is.
func credentialIn(s string) (name, why string) {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), notInName) {
		w = strings.Trim(w, ".") // a name neither starts nor ends with a dot
		for _, r := range ClusterReleases {
			if IsClusterCredential(r, w) {
				return w, fmt.Sprintf("a credential Secret of the ComputePlane cluster (release %s) that Kamaji, Cluster API or the cluster's chart writes in every tenant namespace", r)
			}
		}
		if strings.HasSuffix(w, AdminKubeconfigSuffix) {
			return w, fmt.Sprintf("which looks like the admin kubeconfig Secret of a cluster (Kamaji writes <release>%s, super-admin of that cluster)", AdminKubeconfigSuffix)
		}
	}
	return "", ""
}

// notInName reports the characters a Secret name (a DNS subdomain) cannot
// hold, which split a text into the words that may be names.
func notInName(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.')
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
