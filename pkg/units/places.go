package units

import (
	"regexp"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Places returns whether a fleet of cfg ever writes a file at a path of its
// fleet folder (slash-separated, relative to the folder), in the default
// layout or laid out in Flux units, so that the folder writer prunes only
// there (output.DirOptions.Places): a file with the managed-by label
// elsewhere (a copy of another fleet's folder below this one, a file moved
// by hand) is never removed. Both layouts count whichever cfg chooses, and
// the default wiring folder besides cfg's, so that the files of a layout a
// fleet left are still pruned.
//
// The places are:
//
//	<namespace>/<kind>-<name>.yaml, _cluster/<kind>-<name>.yaml     the default layout
//	<unit>/<file>, <unit> = <namespace>[/_routed] | _account | _platform, then [/part<N>]
//	_account/.../<namespace or _cluster>/<kind>-<name>.yaml, the same for _platform
//	<namespace>/_baseline/kustomization.yaml
//	<namespace>/_baseline/<namespace or _cluster>/<kind>-<name>.yaml
//	<wiring>/<file>, <wiring>/[ns-]<N>-of-<M>/<file>
//	<wiring>/ns-<N>-of-<M>/<unit>/<file> and .../<namespace>/_baseline/...   a source per namespace
//
// where <file> is <kind>-<name>.yaml or kustomization.yaml.
func Places(cfg *api.Config) func(path string) bool {
	wiring := map[string]bool{api.DefaultWiringPath: true}
	if cfg != nil && cfg.Fleet != nil && cfg.Fleet.WiringPath != "" {
		wiring[cfg.Fleet.WiringPath] = true
	}
	return func(p string) bool {
		segs := strings.Split(p, "/")
		if len(segs) == 2 && (isNamespaceFolder(segs[0]) || segs[0] == clusterFolder) && isObjectFile(segs[1]) {
			return true
		}
		if wiring[segs[0]] {
			rest := segs[1:]
			switch {
			case len(rest) == 1:
				return isLayoutFile(rest[0])
			case len(rest) >= 2 && groupFolder.MatchString(rest[0]):
				if len(rest) == 2 {
					return isLayoutFile(rest[1])
				}
				return inUnit(rest[1:])
			}
			return false
		}
		return inUnit(segs)
	}
}

// clusterFolder holds the cluster-scoped objects of a flat layout and of an
// in-cluster baseline (render.Object.Path).
const clusterFolder = "_cluster"

var (
	groupFolder = regexp.MustCompile(`^(` + ByNamespaceGroupPrefix + `)?[0-9]+-of-[0-9]+$`)
	partSegment = regexp.MustCompile(`^part[0-9]+$`)
	// objectFile is render.Object.Path's file name: the kind in lower case,
	// a dash, the name (characters out of a name's replaced by '_').
	objectFile = regexp.MustCompile(`^[a-z0-9]+-[A-Za-z0-9._-]+\.yaml$`)
)

func isObjectFile(name string) bool { return objectFile.MatchString(name) }

func isLayoutFile(name string) bool { return name == KustomizationFile || isObjectFile(name) }

func isNamespaceFolder(name string) bool { return api.ValidDNSLabel(name) }

// inUnit reports whether segs is a file of a unit's folder or of a
// namespace's in-cluster baseline.
func inUnit(segs []string) bool {
	if len(segs) >= 3 && isNamespaceFolder(segs[0]) && segs[1] == wire.BaselineFolder {
		switch rest := segs[2:]; len(rest) {
		case 1:
			return rest[0] == KustomizationFile
		case 2:
			return (isNamespaceFolder(rest[0]) || rest[0] == clusterFolder) && isObjectFile(rest[1])
		}
		return false
	}
	if len(segs) < 2 {
		return false
	}
	namespace := isNamespaceFolder(segs[0])
	if !namespace && segs[0] != api.AccountUnitFolder && segs[0] != api.PlatformUnitFolder {
		return false
	}
	i := 1
	if namespace && segs[i] == RoutedFolder {
		i++
	}
	if i < len(segs)-1 && partSegment.MatchString(segs[i]) {
		i++
	}
	if !namespace && i == len(segs)-2 {
		// The fleet's account and platform units keep each object at its
		// own path (placement).
		return (isNamespaceFolder(segs[i]) || segs[i] == clusterFolder) && isObjectFile(segs[i+1])
	}
	return i == len(segs)-1 && isLayoutFile(segs[i])
}
