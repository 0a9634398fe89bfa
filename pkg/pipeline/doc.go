// Package pipeline runs computeplane-fn once: read the inputs (package
// input), build and check the fleet (package fleet), render every output
// (package render) and put the objects in order (package order). Run is its
// one entry point; its Options say where the config and the inputs come
// from, so that the KRM adapter (package fn, a ResourceList's items and
// functionConfig) and the standalone CLI (a config file and input files)
// run the same steps. Writing the result is the caller's: a ResourceList
// (fn), a YAML stream or a fleet folder (packages output and units).
//
// Every run holds its objects one way, for fleets of any size: each object
// is read by the fleet as soon as its file is decoded (model.Reader),
// which decodes tenants, knob objects and apps, encodes an app's values as
// they will read in its release and drops the node trees it no longer
// needs; render.Outputs then puts the releases off until a writer encodes
// them (render.Object.AppendYAML).
package pipeline
