// Package output writes rendered objects: as one YAML stream (the standalone
// CLI's stdout) and, for fleet repos, as a folder of files. The stream is
// encoded in chunks on all cores and written in order as each chunk is ready,
// so that a large fleet's output is never held whole.
//
// The folder writer works on a list of File values, so that any layout can be
// written: Files gives the default one (one generated object per file at its
// path annotation). WriteDir makes a folder hold exactly those files, pruning
// the files it wrote before and no longer generates (recognised by content,
// see IsManaged) and never touching any other; with DirOptions.Check it
// reports what it would change, with a unified diff per file. A write is staged and undone on
// failure, so that a refused or failed run leaves the folder as it was.
package output
