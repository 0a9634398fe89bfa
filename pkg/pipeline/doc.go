// Package pipeline runs computeplane-fn once: read the inputs (package
// input), build and check the fleet (package fleet), render every output
// (package render) and put the objects in order (package order). Run is its
// one entry point; its Options say where the config and the inputs come
// from, so that the KRM adapter (package fn, a ResourceList's items and
// functionConfig) and the standalone CLI (a config file and input files)
// run the same steps. Writing the result is the caller's: a ResourceList
// (fn), a YAML stream or a fleet folder (packages output and units).
//
// A lazy run is for fleets of any size, and what the CLI runs: each app's
// values are encoded while its file is read (api.App.EncodeValues) and its
// node tree dropped, and render.Outputs puts the releases off until a writer
// encodes them (render.Object.AppendYAML).
package pipeline
