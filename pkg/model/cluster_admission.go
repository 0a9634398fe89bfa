package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Names of the Pod Security wiring of a cluster's API server. Kamaji runs
// that API server on the management cluster, in the tenant namespace, so the
// ConfigMap lives there and is mounted through apps/kubernetes's
// controlPlane.apiServer.extraVolumes and extraVolumeMounts.
const (
	// AdmissionVolumeName is the volume of the control-plane pod that
	// mounts it; the chart reserves talos-ca, talos-tls-cert and
	// authentication-config, and this name is none of them.
	AdmissionVolumeName = "computeplane-admission"
	// AdmissionMountPath is where the API server container sees it.
	AdmissionMountPath = "/etc/kubernetes/admission"
	// AdmissionConfigFlag is the kube-apiserver flag that points at it.
	AdmissionConfigFlag = "--admission-control-config-file"
)

// Admission is the Pod Security configuration shared by every cluster of a
// run: one level, enforced, audited and warned about by default, and the
// namespaces of the operator's addon set that the level would break.
type Admission struct {
	Level string
	// Exempt are the exempted addon namespaces, sorted by namespace.
	Exempt []AddonNamespace
	// FileName is the ConfigMap key and the file the API server reads. It
	// carries a hash of the content, so that any change to the
	// configuration changes the API server's flag, and with it the
	// control-plane Deployment: kube-apiserver reads the file only when it
	// starts, and a ConfigMap edit alone would never reach it.
	FileName string
	// Config is the AdmissionConfiguration, as YAML.
	Config string
}

// NewAdmission returns the Pod Security configuration of level for a cluster
// whose operator-fixed values are fixed, or nil for level privileged, which
// enforces nothing and so needs neither the ConfigMap nor the wiring. An
// empty level is the default, restricted.
// Exemptions come from the fixed values alone: an addon that a tenant turns
// on through a permissive knob schema gets none, so a knob can never widen
// what Pod Security lets through.
func NewAdmission(level string, fixed map[string]any) (*Admission, error) {
	switch level {
	case api.PodSecurityPrivileged:
		return nil, nil
	case "":
		level = api.PodSecurityRestricted // the documented default
	}
	if levelRank(level) < 0 {
		return nil, fmt.Errorf("unknown Pod Security level %q", level)
	}
	exempt := PodSecurityExemptions(level, fixed)
	namespaces := make([]string, len(exempt))
	for i, e := range exempt {
		namespaces[i] = e.Namespace
	}
	doc := admissionConfiguration{
		APIVersion: "apiserver.config.k8s.io/v1",
		Kind:       "AdmissionConfiguration",
		Plugins: []admissionPlugin{{
			Name: "PodSecurity",
			Configuration: podSecurityConfiguration{
				APIVersion: "pod-security.admission.config.k8s.io/v1",
				Kind:       "PodSecurityConfiguration",
				Defaults: podSecurityDefaults{
					Enforce: level, EnforceVersion: "latest",
					Audit: level, AuditVersion: "latest",
					Warn: level, WarnVersion: "latest",
				},
				Exemptions: podSecurityExemptions{
					Usernames:      []string{},
					RuntimeClasses: []string{},
					Namespaces:     namespaces,
				},
			},
		}},
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the AdmissionConfiguration: %w", err)
	}
	sum := sha256.Sum256(data)
	return &Admission{
		Level:    level,
		Exempt:   exempt,
		FileName: "admission-" + hex.EncodeToString(sum[:])[:10] + ".yaml",
		Config:   string(data),
	}, nil
}

// Namespaces returns the exempted namespaces, sorted.
func (a *Admission) Namespaces() []string {
	out := make([]string, len(a.Exempt))
	for i, e := range a.Exempt {
		out[i] = e.Namespace
	}
	return out
}

// Flag is the kube-apiserver argument that loads the configuration.
func (a *Admission) Flag() string {
	return AdmissionConfigFlag + "=" + AdmissionMountPath + "/" + a.FileName
}

// Volume is the control-plane pod volume holding the ConfigMap.
func (a *Admission) Volume() corev1.Volume {
	return corev1.Volume{
		Name: AdmissionVolumeName,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: wire.AdmissionConfigMapName},
		}},
	}
}

// VolumeMount mounts the volume, read-only, into the API server container.
func (a *Admission) VolumeMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: AdmissionVolumeName, MountPath: AdmissionMountPath, ReadOnly: true}
}

// admissionConfiguration is apiserver.config.k8s.io/v1 AdmissionConfiguration
// with the one plugin this function configures; k8s.io/apiserver would bring
// the whole API server library for these few fields.
type admissionConfiguration struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Plugins    []admissionPlugin `json:"plugins"`
}

type admissionPlugin struct {
	Name          string                   `json:"name"`
	Configuration podSecurityConfiguration `json:"configuration"`
}

// podSecurityConfiguration is pod-security.admission.config.k8s.io/v1
// PodSecurityConfiguration.
type podSecurityConfiguration struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Defaults   podSecurityDefaults   `json:"defaults"`
	Exemptions podSecurityExemptions `json:"exemptions"`
}

type podSecurityDefaults struct {
	Enforce        string `json:"enforce"`
	EnforceVersion string `json:"enforce-version"`
	Audit          string `json:"audit"`
	AuditVersion   string `json:"audit-version"`
	Warn           string `json:"warn"`
	WarnVersion    string `json:"warn-version"`
}

type podSecurityExemptions struct {
	Usernames      []string `json:"usernames"`
	RuntimeClasses []string `json:"runtimeClasses"`
	Namespaces     []string `json:"namespaces"`
}

// wireAdmission adds the flag, the volume and the mount to the API server
// settings of the fixed values, after whatever the operator set there. A
// setting of the operator's that would replace or switch off the
// configuration is refused rather than silently overridden.
func wireAdmission(cfg *api.Config, a *Admission, values map[string]any) api.Problems {
	const base = "spec.cluster.values.controlPlane.apiServer"
	fail := func(field, format string, args ...any) api.Problems {
		return api.Problems{api.Errorf(cfg.Ref, cfg.Origin, field, format, args...)}
	}
	cp, ok := childMap(values, "controlPlane")
	if !ok {
		return fail("spec.cluster.values.controlPlane", "must be a mapping")
	}
	as, ok := childMap(cp, "apiServer")
	if !ok {
		return fail("spec.cluster.values.controlPlane.apiServer", "must be a mapping")
	}
	var problems api.Problems
	args, ok := childList(as, "extraArgs")
	if !ok {
		return fail(base+".extraArgs", "must be a list of strings")
	}
	for i, arg := range args {
		s, _ := arg.(string)
		switch {
		case hasFlag(s, AdmissionConfigFlag):
			problems = append(problems, fail(fmt.Sprintf("%s.extraArgs[%d]", base, i),
				"would replace the Pod Security configuration that podSecurity: %s wires in; remove the flag, or set spec.cluster.podSecurity: privileged to manage admission yourself", a.Level)...)
		case hasFlag(s, "--disable-admission-plugins") && slices.Contains(flagList(s), "PodSecurity"):
			problems = append(problems, fail(fmt.Sprintf("%s.extraArgs[%d]", base, i),
				"switches off the PodSecurity admission plugin that podSecurity: %s relies on; remove PodSecurity from the list", a.Level)...)
		}
	}
	volumes, ok := childList(as, "extraVolumes")
	if !ok {
		return fail(base+".extraVolumes", "must be a list of volumes")
	}
	for i, v := range volumes {
		if m, _ := v.(map[string]any); m["name"] == AdmissionVolumeName {
			problems = append(problems, fail(fmt.Sprintf("%s.extraVolumes[%d].name", base, i),
				"volume name %q is reserved for the Pod Security configuration; rename the volume", AdmissionVolumeName)...)
		}
	}
	mounts, ok := childList(as, "extraVolumeMounts")
	if !ok {
		return fail(base+".extraVolumeMounts", "must be a list of volume mounts")
	}
	for i, v := range mounts {
		m, _ := v.(map[string]any)
		if m["name"] == AdmissionVolumeName || m["mountPath"] == AdmissionMountPath {
			problems = append(problems, fail(fmt.Sprintf("%s.extraVolumeMounts[%d]", base, i),
				"volume %q at %s is reserved for the Pod Security configuration; mount elsewhere", AdmissionVolumeName, AdmissionMountPath)...)
		}
	}
	if len(problems) > 0 {
		return problems
	}
	volume, err := toValue(a.Volume())
	if err != nil {
		return fail(base+".extraVolumes", "%v", err)
	}
	mount, err := toValue(a.VolumeMount())
	if err != nil {
		return fail(base+".extraVolumeMounts", "%v", err)
	}
	as["extraArgs"] = append(args, a.Flag())
	as["extraVolumes"] = append(volumes, volume)
	as["extraVolumeMounts"] = append(mounts, mount)
	return nil
}
