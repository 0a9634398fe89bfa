package image

import (
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Release describes what is being released; it becomes the image's labels.
type Release struct {
	// Repo is the repository the image is published to, e.g.
	// ghcr.io/computeplane-dev/computeplane-fn.
	Repo string
	// Version is the module version (a tag such as v0.1.0, or a
	// pseudo-version); the image tag is made from it (Tag).
	Version string
	// Commit is the full commit hash.
	Commit string
	// Source is the URL of the source repository.
	Source string
	// Licenses is an SPDX license expression.
	Licenses string
	// Created dates the image, its history and every file of its layer: the
	// commit's time, so that the image is reproducible.
	Created time.Time
}

// Label keys of the OCI image spec (annotations.md) that the image carries.
const (
	LabelTitle         = "org.opencontainers.image.title"
	LabelDescription   = "org.opencontainers.image.description"
	LabelSource        = "org.opencontainers.image.source"
	LabelURL           = "org.opencontainers.image.url"
	LabelDocumentation = "org.opencontainers.image.documentation"
	LabelVersion       = "org.opencontainers.image.version"
	LabelRevision      = "org.opencontainers.image.revision"
	LabelLicenses      = "org.opencontainers.image.licenses"
	LabelCreated       = "org.opencontainers.image.created"
)

// Description is the image's one-line description.
const Description = "KRM function: renders Cozystack ComputePlanes as plain Flux objects"

// Labels returns the OCI labels of the release.
func (r Release) Labels() map[string]string {
	docs := r.Source + "/blob/" + r.Commit + "/docs/function.md"
	return map[string]string{
		LabelTitle:         "computeplane-fn",
		LabelDescription:   Description,
		LabelSource:        r.Source,
		LabelURL:           r.Source,
		LabelDocumentation: docs,
		LabelVersion:       r.Version,
		LabelRevision:      r.Commit,
		LabelLicenses:      r.Licenses,
		LabelCreated:       r.Created.UTC().Format(time.RFC3339),
	}
}

func (r Release) check() error {
	for name, v := range map[string]string{"repo": r.Repo, "version": r.Version, "commit": r.Commit, "source": r.Source, "licenses": r.Licenses} {
		if v == "" {
			return fmt.Errorf("the release has no %s", name)
		}
	}
	return nil
}

// Build returns the image of one platform (OS and Architecture set) around
// binary, the static computeplane-fn built for it.
func Build(binary []byte, platform v1.Platform, r Release) (v1.Image, error) {
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("failed to build the image: %w", err)
	}
	if platform.OS == "" || platform.Architecture == "" {
		return nil, fmt.Errorf("failed to build the image: platform %q has no OS or architecture", platform.String())
	}
	l, err := layer(binary, r.Created)
	if err != nil {
		return nil, fmt.Errorf("failed to build the image for %s: %w", platform.String(), err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: l,
		History: v1.History{
			Created:   v1.Time{Time: r.Created},
			CreatedBy: "computeplane-fn tools/release image: " + Entrypoint + ", /etc/passwd, /etc/group, " + WorkingDir,
			Comment:   "built without a container engine by go-containerregistry",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to build the image for %s: %w", platform.String(), err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("failed to build the image for %s: %w", platform.String(), err)
	}
	cf = cf.DeepCopy()
	cf.OS = platform.OS
	cf.Architecture = platform.Architecture
	cf.Variant = platform.Variant
	cf.Created = v1.Time{Time: r.Created}
	cf.Author = ""
	cf.Config = v1.Config{
		Entrypoint: []string{Entrypoint},
		User:       User,
		WorkingDir: WorkingDir,
		Labels:     r.Labels(),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("failed to build the image for %s: %w", platform.String(), err)
	}
	return mutate.Annotations(img, r.Labels()).(v1.Image), nil
}
