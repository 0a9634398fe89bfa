package api

// Tenant is one entry of the tenant list.
type Tenant struct {
	Ref    ObjectRef
	Origin Origin

	Name         string
	Parent       string // metadata.namespace: the parent tenant's namespace
	ComputePlane bool   // spec.computeplane
}

// TenantSpecFields are the fields of a Tenant's spec: those of Cozystack's
// tenant ApplicationDefinition's openAPISchema (checked against it by a
// test), computeplane among them. A key outside them is refused: a typo
// such as spec.computeplan would otherwise leave the tenant without its
// ComputePlane without a word.
var TenantSpecFields = []string{"computeplane", "etcd", "gateway", "host", "ingress", "monitoring", "resourceQuotas", "schedulingClass", "seaweedfs"}

// DecodeTenant reads a Tenant of the tenant list.
func DecodeTenant(o Object) (*Tenant, Problems) {
	d := o.decoder()
	t := &Tenant{Ref: o.Ref(), Origin: o.Origin}
	obj := readObject(o.Node, "")
	d.keys(obj, "", ObjectFields...)
	md := d.metadata(obj, true)
	t.Name = d.str(get(md, "name"), "metadata.name")
	t.Parent = d.str(get(md, "namespace"), "metadata.namespace")
	if t.Name != "" && !tenantNameRE.MatchString(t.Name) {
		d.fail("metadata.name", "tenant name %q must start with a lowercase letter and hold only lowercase letters and digits (^[a-z][a-z0-9]*$); dashes are not allowed", clip(t.Name))
	}
	spec := d.mapping(get(obj, "spec"), "spec")
	d.keys(spec, "spec", TenantSpecFields...)
	t.ComputePlane = d.boolean(get(spec, "computeplane"), "spec.computeplane", false)
	return t, d.problems
}
