// Command release makes the release artefacts of computeplane-fn that the
// Go toolchain does not: the SBOM, the container image and the checksums.
// The Makefile runs it (make dist, make image); see docs/release.md.
//
//	release sbom -version V -commit C -source-date-epoch S -o FILE BINARY...
//	release image -repo R -version V -commit C -source URL -licenses L -source-date-epoch S -binary OS/ARCH=FILE... -o DIR
//	release checksums DIR
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/computeplane-dev/computeplane-fn/tools/release/chart"
	"github.com/computeplane-dev/computeplane-fn/tools/release/checksums"
	"github.com/computeplane-dev/computeplane-fn/tools/release/image"
	"github.com/computeplane-dev/computeplane-fn/tools/release/sbom"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: release sbom|image|chart|checksums [flags]")
		return 2
	}
	var err error
	switch args[0] {
	case "sbom":
		err = runSBOM(args[1:], stderr)
	case "image":
		err = runImage(args[1:], stdout, stderr)
	case "chart":
		err = runChart(args[1:], stdout, stderr)
	case "checksums":
		err = runChecksums(args[1:], stdout)
	default:
		fmt.Fprintf(stderr, "release: unknown command %q: want sbom, image, chart or checksums\n", args[0])
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "release %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// releaseFlags are the flags that name the release, shared by sbom and
// image.
type releaseFlags struct {
	version, commit, source, licenses string
	epoch                             int64
}

// newFlagSet returns the flag set of the subcommand name, which writes its
// usage to stderr, with the release flags on it.
func newFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *releaseFlags) {
	fs := flag.NewFlagSet("release "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := &releaseFlags{}
	fs.StringVar(&r.version, "version", "", "module version stamped into the binaries")
	fs.StringVar(&r.commit, "commit", "", "commit the release is built from")
	fs.StringVar(&r.source, "source", "https://github.com/computeplane-dev/computeplane-fn", "URL of the source repository")
	fs.StringVar(&r.licenses, "licenses", "Apache-2.0", "SPDX license expression")
	fs.Int64Var(&r.epoch, "source-date-epoch", 0, "the commit's time in seconds since 1970: dates the artefacts")
	return fs, r
}

func (r *releaseFlags) created() time.Time { return time.Unix(r.epoch, 0).UTC() }

func runSBOM(args []string, stderr io.Writer) error {
	fs, rf := newFlagSet("sbom", stderr)
	out := fs.String("o", "", "output `FILE` (CycloneDX JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || rf.version == "" || fs.NArg() == 0 {
		return fmt.Errorf("-o, -version and the release binaries (arguments) are required")
	}
	bom, err := sbom.Generate(sbom.Options{
		Binaries: fs.Args(), Version: rf.version, Commit: rf.commit,
		Source: rf.source, Licenses: rf.licenses, Created: rf.created(), Log: stderr,
	})
	if err != nil {
		return err
	}
	return sbom.WriteFile(*out, bom)
}

// binaryFlags collects -binary OS/ARCH=FILE.
type binaryFlags []image.Binary

func (b *binaryFlags) String() string { return fmt.Sprint(*b) }

func (b *binaryFlags) Set(s string) error {
	platform, path, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return fmt.Errorf("%q is not OS/ARCH=FILE", s)
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil || p.OS == "" || p.Architecture == "" {
		return fmt.Errorf("%q is not OS/ARCH=FILE", s)
	}
	*b = append(*b, image.Binary{Platform: *p, Path: path})
	return nil
}

func runImage(args []string, stdout, stderr io.Writer) error {
	fs, rf := newFlagSet("image", stderr)
	repo := fs.String("repo", "ghcr.io/computeplane-dev/computeplane-fn", "repository the image is published to")
	out := fs.String("o", "", "output `DIR`")
	var binaries binaryFlags
	fs.Var(&binaries, "binary", "`OS/ARCH=FILE`: the static binary of a platform (repeat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-o is required")
	}
	r := image.Release{
		Repo: *repo, Version: rf.version, Commit: rf.commit,
		Source: rf.source, Licenses: rf.licenses, Created: rf.created(),
	}
	idx, err := image.Write(*out, r, binaries)
	if err != nil {
		return err
	}
	ref, _ := r.Ref()
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	for _, b := range binaries {
		fmt.Fprintf(stdout, "wrote %s/%s (%s, docker load)\n", *out, image.TarballName(b.Platform), ref)
	}
	fmt.Fprintf(stdout, "wrote %s/%s (OCI layout, index %s)\n", *out, image.LayoutDir, digest)
	return nil
}

func runChart(args []string, stdout, stderr io.Writer) error {
	fs, rf := newFlagSet("chart", stderr)
	dir := fs.String("dir", "", "the chart's `DIR`")
	out := fs.String("o", "", "output `DIR`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *out == "" {
		return fmt.Errorf("-dir and -o are required")
	}
	c, err := chart.Read(*dir)
	if err != nil {
		return err
	}
	digest, err := chart.Write(*out, c, rf.created())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/%s (helm chart %s %s)\n", *out, c.ArchiveName(), c.Metadata.Name, c.Metadata.Version)
	fmt.Fprintf(stdout, "wrote %s/%s (OCI layout, manifest %s, tag %s)\n", *out, chart.LayoutDir, digest, c.Metadata.Version)
	return nil
}

func runChecksums(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("want one DIR")
	}
	sums, err := checksums.Write(args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/%s (%d files)\n", args[0], checksums.File, len(sums))
	return nil
}
