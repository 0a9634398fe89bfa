// Package wire holds the names that other programs read or write: the label
// and annotation keys, the object names and the field names that the
// function renders and that cozystack-api, Flux, the guard's policy and
// the pull-request summary agree on. Each has one home here, so that a
// renderer and the reader of its output cannot drift apart.
package wire
