// Package order puts the rendered objects of a run in the one stable order
// of the output (platform objects first, then by namespace, kind, name and
// apiVersion) and refuses two writers of one object. It is the only place
// that orders objects: the stream, the folder of one file per object and the
// Flux units of a fleet (package units) all follow Compare.
package order
