package fn

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// packagePathAnnotation is where kpt fn render says, on every item and on
// the function config, which package (an absolute folder) the item's path
// is relative to.
const packagePathAnnotation = "internal.config.kubernetes.io/package-path"

// legacyPathAnnotation is the path annotation's older spelling, which kpt
// still sets beside kioutil.PathAnnotation.
const legacyPathAnnotation = "config.kubernetes.io/path"

// configDir finds the folder of the function config, which spec.inputs
// are relative to, as kustomize and kpt resolve paths, and the name kpt
// gives that folder in its items' paths:
//
//   - kpt fn render gives the config's path in the package and the
//     package's folder (kpt runs the function in the folder kpt was started
//     in, not the package's);
//   - kpt fn eval --fn-config gives neither, but hands the config over as an
//     item too when its file is in the package: the item's path, relative to
//     the package, which is the working directory when kpt fn eval runs as
//     the docs say (kpt fn eval . ...);
//   - kustomize runs a generator in the kustomization's folder and says
//     nothing of the config's file: the working directory (p.Dir), where
//     kustomize resolves the generator's own paths (exec.path) too.
//
// A config that names no spec.inputs needs no folder.
func (p Processor) configDir(rl *framework.ResourceList) (dir, shown string, problems api.Problems) {
	base := cmp.Or(p.Dir, ".")
	fc := rl.FunctionConfig
	if !hasInputs(fc.YNode()) {
		return base, "", nil
	}
	ann := fc.GetAnnotations(kioutil.PathAnnotation, legacyPathAnnotation, packagePathAnnotation)
	file := cmp.Or(ann[kioutil.PathAnnotation], ann[legacyPathAnnotation])
	pkg := ann[packagePathAnnotation]
	if file == "" {
		// The config among the items: a ComputePlaneGenerator of the same
		// name from a file, the only one.
		name := fc.GetName()
		for _, item := range rl.Items {
			if item.GetApiVersion() != api.ConfigAPIVersion || item.GetKind() != api.ConfigKind || item.GetName() != name {
				continue
			}
			a := item.GetAnnotations(kioutil.PathAnnotation, legacyPathAnnotation, packagePathAnnotation)
			at := cmp.Or(a[kioutil.PathAnnotation], a[legacyPathAnnotation])
			if at == "" {
				continue
			}
			if file != "" && file != at {
				return base, "", nil // two candidates: neither is known to be it
			}
			file, pkg = at, a[packagePathAnnotation]
		}
	}
	if file == "" {
		return base, "", nil
	}
	shown = path.Dir(path.Clean(file))
	if shown == "." {
		shown = ""
	}
	root := base
	if pkg != "" && filepath.IsAbs(pkg) {
		root = pkg
	}
	dir = filepath.Join(root, filepath.FromSlash(shown))
	at := filepath.Join(root, filepath.FromSlash(file))
	if info, err := os.Stat(at); err != nil || !info.Mode().IsRegular() {
		where, _ := filepath.Abs(root)
		return "", "", api.Problems{{File: file, Message: fmt.Sprintf(
			"the function config is %s of the package, and spec.inputs are relative to its folder, but kpt fn eval does not say where the package is, and the working directory %s holds no %s: run kpt fn eval from the package's folder (kpt fn eval . --exec computeplane-fn --fn-config %s)",
			file, where, file, file)}}
	}
	return dir, shown, nil
}

// hasInputs reports whether a function config names spec.inputs.
func hasInputs(n *yaml.Node) bool {
	rn := yaml.NewRNode(n)
	inputs, err := rn.Pipe(yaml.Lookup("spec", "inputs"))
	return err == nil && inputs != nil && len(inputs.YNode().Content) > 0
}
