// Package gitrev reads a folder as a revision of its Git repository holds
// it, through the git command (rev-parse, ls-tree, cat-file), for the
// pull-request summary's base (computeplane-fn --base): what the base
// branch's fleet folder holds, whatever the checkout holds now.
package gitrev
