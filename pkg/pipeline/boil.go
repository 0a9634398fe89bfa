package pipeline

import (
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
)

// boilDown decodes a Tenant, ComputePlane knobs or an app object as indexing
// would, encodes an app's values as they will read in its release, and drops
// the object's node tree: from here on the object is a few strings, maps and
// the text of its values. A lazy run reads with it (input.Options.Prepare).
func boilDown(o *api.Object) {
	var d api.Decoded
	switch {
	case fleet.IsApp(*o):
		d.App, d.Problems = api.DecodeApp(*o)
		d.App.EncodeValues()
	case fleet.IsTenant(*o):
		d.Tenant, d.Problems = api.DecodeTenant(*o)
	case fleet.IsKnobs(*o):
		d.Knobs, d.Problems = api.DecodeKnobs(*o)
	default:
		return
	}
	o.Decoded, o.Node = &d, nil
}
