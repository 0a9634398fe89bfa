package cluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The guard against VMs that take a ComputePlane's credentials, accounts
// or disks (issue 26), tried on the real API server: each field of
// kubevirt.io/api v1.8.4 that names a Secret, a service account or a claim,
// refused as the cluster's and admitted as the tenant's own, in each kind
// that carries a VirtualMachineInstanceSpec, and the copies that name a
// worker. The CRDs are stand-ins (testdata/crds), so what is proven is the
// policy as the API server evaluates it, on the objects as sent.

// kubevirtObject is a kind of KubeVirt's with the VMI spec and template
// labels given, where that kind keeps them; vmExtra are more fields of
// its VirtualMachineSpec (VM, pool and snapshot content only).
func kubevirtObject(kind, name string, templateLabels, vmiSpec, vmExtra map[string]any) *unstructured.Unstructured {
	if templateLabels == nil {
		templateLabels = map[string]any{"app": name}
	}
	template := map[string]any{"metadata": map[string]any{"labels": templateLabels}, "spec": vmiSpec}
	vmSpec := func() map[string]any {
		s := map[string]any{"runStrategy": "Always", "template": template}
		for k, v := range vmExtra {
			s[k] = v
		}
		return s
	}
	selector := map[string]any{"matchLabels": map[string]any{"app": name}}
	switch kind {
	case "VirtualMachine":
		return obj("kubevirt.io/v1", kind, guardNS, name, map[string]any{"spec": vmSpec()})
	case "VirtualMachineInstance":
		return obj("kubevirt.io/v1", kind, guardNS, name, map[string]any{
			"metadata": map[string]any{"name": name, "namespace": guardNS, "labels": templateLabels}, "spec": vmiSpec})
	case "VirtualMachineInstanceReplicaSet":
		return obj("kubevirt.io/v1", kind, guardNS, name, map[string]any{"spec": map[string]any{"replicas": int64(1), "selector": selector, "template": template}})
	case "VirtualMachinePool":
		return obj("pool.kubevirt.io/v1beta1", kind, guardNS, name, map[string]any{"spec": map[string]any{"replicas": int64(1), "selector": selector,
			"virtualMachineTemplate": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}}, "spec": vmSpec()}}})
	case "VirtualMachineSnapshotContent":
		return obj("snapshot.kubevirt.io/v1beta1", kind, guardNS, name, map[string]any{"spec": map[string]any{
			"source": map[string]any{"virtualMachine": map[string]any{"metadata": map[string]any{"name": name}, "spec": vmSpec()}}}})
	}
	panic("no such kind " + kind)
}

// vmiSpecOf is a VirtualMachineInstanceSpec with a root disk and the
// volumes given, and more fields.
func vmiSpecOf(volumes []any, more map[string]any) map[string]any {
	s := map[string]any{"domain": map[string]any{"devices": map[string]any{}},
		"volumes": append([]any{map[string]any{"name": "root", "containerDisk": map[string]any{"image": "quay.io/containerdisks/fedora:41"}}}, volumes...)}
	for k, v := range more {
		s[k] = v
	}
	return s
}

func volume(name, kind string, source map[string]any) map[string]any {
	return map[string]any{"name": name, kind: source}
}

func named(n string) map[string]any { return map[string]any{"name": n} }

func (e *env) kubevirtGuardCases(t *testing.T) []guardCase {
	t.Helper()
	workerVM := "computeplane-md0-abcde"
	type field struct {
		name              string
		refused, admitted map[string]any // VMI specs
		says              []string
	}
	secretVol := func(n string) map[string]any {
		return vmiSpecOf([]any{volume("kc", "secret", map[string]any{"secretName": n})}, nil)
	}
	saVol := func(n string) map[string]any {
		return vmiSpecOf([]any{volume("sa", "serviceAccount", map[string]any{"serviceAccountName": n})}, nil)
	}
	one := func(kind string, source map[string]any) map[string]any {
		return vmiSpecOf([]any{volume("v", kind, source)}, nil)
	}
	access := func(kind, propagation, secret string) map[string]any {
		return vmiSpecOf(nil, map[string]any{"accessCredentials": []any{map[string]any{kind: map[string]any{
			"source": map[string]any{"secret": map[string]any{"secretName": secret}}, "propagationMethod": map[string]any{propagation: map[string]any{}}}}}})
	}
	utility := func(claim string) map[string]any {
		return vmiSpecOf(nil, map[string]any{"utilityVolumes": []any{map[string]any{"name": "dump", "claimName": claim}}})
	}
	fields := []field{
		{"secret admin kubeconfig", secretVol("computeplane-admin-kubeconfig"), secretVol("my-app-config"), sayG3Credentials},
		{"secret CA", secretVol("computeplane-ca"), nil, sayG3Credentials},
		{"secret Talos bundle", secretVol("computeplane-talos"), nil, sayG3Credentials},
		{"secret talosconfig", secretVol("computeplane-talosconfig"), nil, sayG3Credentials},
		{"cloudInitNoCloud secretRef", one("cloudInitNoCloud", map[string]any{"secretRef": named("computeplane-md0-abcde-x-bootstrap-data-userdata")}),
			one("cloudInitNoCloud", map[string]any{"secretRef": named("my-userdata")}), sayG3Credentials},
		{"cloudInitNoCloud networkDataSecretRef", one("cloudInitNoCloud", map[string]any{"userData": "x", "networkDataSecretRef": named("computeplane-kubeconfig")}),
			one("cloudInitNoCloud", map[string]any{"userData": "x", "networkDataSecretRef": named("my-network")}), sayG3Credentials},
		{"cloudInitConfigDrive secretRef", one("cloudInitConfigDrive", map[string]any{"secretRef": named("computeplane-sa-certificate")}),
			one("cloudInitConfigDrive", map[string]any{"secretRef": named("my-userdata")}), sayG3Credentials},
		{"cloudInitConfigDrive networkDataSecretRef", one("cloudInitConfigDrive", map[string]any{"userData": "x", "networkDataSecretRef": named("computeplane-datastore-config")}),
			one("cloudInitConfigDrive", map[string]any{"userData": "x", "networkDataSecretRef": named("my-network")}), sayG3Credentials},
		{"sysprep secret", one("sysprep", map[string]any{"secret": named("computeplane-admin-kubeconfig")}), one("sysprep", map[string]any{"secret": named("my-unattend")}), sayG3Credentials},
		{"containerDisk imagePullSecret", one("containerDisk", map[string]any{"image": "quay.io/x/y:1", "imagePullSecret": "computeplane-admin-kubeconfig"}),
			one("containerDisk", map[string]any{"image": "quay.io/x/y:1", "imagePullSecret": "my-pull-secret"}), sayG3Credentials},
		{"accessCredentials sshPublicKey", access("sshPublicKey", "noCloud", "computeplane-ssh-keys"), access("sshPublicKey", "noCloud", "my-keys"), sayG3Credentials},
		{"accessCredentials userPassword", access("userPassword", "qemuGuestAgent", "computeplane-talos-ca"), access("userPassword", "qemuGuestAgent", "my-password"), sayG3Credentials},
		{"serviceAccount installer", saVol(installerAccount), saVol("default"), sayG3Credentials},
		{"serviceAccount talos-reconcile", saVol("computeplane-talos-reconcile"), nil, sayG3Credentials},
		{"serviceAccount kcsi", saVol("computeplane-kcsi"), nil, sayG3Credentials},
		{"ephemeral claim of a worker's disk", one("ephemeral", map[string]any{"persistentVolumeClaim": map[string]any{"claimName": workerDisk}}),
			one("ephemeral", map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "own-disk"}}), sayG3Disks},
		{"memoryDump into a worker's disk", one("memoryDump", map[string]any{"claimName": workerDisk}), one("memoryDump", map[string]any{"claimName": "own-dump"}), sayG3Disks},
		{"utilityVolume of a worker's disk", utility(workerDisk), utility("own-dump"), sayG3Disks},
		{"dataVolume of a worker's disk", one("dataVolume", named(workerDisk)), nil, sayG3Disks},
	}
	var cases []guardCase
	// Every field in a VM; the other kinds with a few fields each (their
	// place of the VMI spec is what differs).
	for _, f := range fields {
		cases = append(cases, guardCase{name: "G3/VM " + f.name + ", tenant", as: tenantUser,
			obj: kubevirtObject("VirtualMachine", "vm-steal", nil, f.refused, nil), refused: true, says: f.says})
		if f.admitted != nil {
			cases = append(cases, guardCase{name: "G3/VM " + f.name + ", the tenant's own", as: tenantUser,
				obj: kubevirtObject("VirtualMachine", "vm-own", nil, f.admitted, nil)})
		}
	}
	for _, kind := range []string{"VirtualMachineInstance", "VirtualMachineInstanceReplicaSet", "VirtualMachinePool", "VirtualMachineSnapshotContent"} {
		for _, f := range []field{fields[0], fields[4], fields[12], fields[15]} {
			cases = append(cases, guardCase{name: "G3/" + kind + " " + f.name + ", tenant", as: tenantUser,
				obj: kubevirtObject(kind, "steal", nil, f.refused, nil), refused: true, says: f.says})
			cases = append(cases, guardCase{name: "G3/" + kind + " " + f.name + ", the tenant's own", as: tenantUser,
				obj: kubevirtObject(kind, "own", nil, f.admitted, nil)})
		}
		cases = append(cases, guardCase{name: "G3/" + kind + " labelled as a worker, tenant", as: tenantUser,
			obj: kubevirtObject(kind, "labelled", map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"}, vmiSpecOf(nil, nil), nil), refused: true, says: sayG3Disks})
	}
	dvt := func(spec map[string]any, name string) map[string]any {
		return map[string]any{"dataVolumeTemplates": []any{map[string]any{"metadata": named(name), "spec": spec}}}
	}
	cases = append(cases,
		guardCase{name: "G3/pool of VMs labelled as workers, tenant", as: tenantUser, obj: func() *unstructured.Unstructured {
			o := kubevirtObject("VirtualMachinePool", "pool-workers", nil, vmiSpecOf(nil, nil), nil)
			unstructured.SetNestedField(o.Object, map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"}, "spec", "virtualMachineTemplate", "metadata", "labels")
			return o
		}(), refused: true, says: sayG3Disks},
		guardCase{name: "G3/pool whose dataVolumeTemplate clones a worker's disk, tenant", as: tenantUser,
			obj: kubevirtObject("VirtualMachinePool", "pool-clone", nil, one("dataVolume", named("copy")),
				dvt(map[string]any{"source": map[string]any{"pvc": map[string]any{"name": workerDisk, "namespace": guardNS}}, "storage": map[string]any{}}, "copy")), refused: true, says: sayG3Disks},
		guardCase{name: "G3/VM whose dataVolumeTemplate restores a worker's snapshot, tenant", as: tenantUser,
			obj: kubevirtObject("VirtualMachine", "vm-snap", nil, one("dataVolume", named("copy")),
				dvt(map[string]any{"source": map[string]any{"snapshot": map[string]any{"name": "computeplane-md0-abcde-snap", "namespace": guardNS}}, "storage": map[string]any{}}, "copy")), refused: true, says: sayG3Disks},
		guardCase{name: "G3/VM whose dataVolumeTemplate restores its own snapshot, tenant", as: tenantUser,
			obj: kubevirtObject("VirtualMachine", "vm-snap", nil, one("dataVolume", named("copy")),
				dvt(map[string]any{"source": map[string]any{"snapshot": map[string]any{"name": "own-snap", "namespace": guardNS}}, "storage": map[string]any{}}, "copy"))},
		guardCase{name: "G3/VM with the fleet's account, in the fleet's namespace, a chart of Cozystack's Flux", as: cozystackFluxSA, obj: func() *unstructured.Unstructured {
			o := kubevirtObject("VirtualMachine", "vm-fleet", nil, saVol(fleetAccount), nil)
			o.SetNamespace(e.mode.fleetNamespace)
			return o
		}(), refused: true, says: sayG3Credentials},
		// The platform's own: a worker's VMI as virt-controller makes it.
		guardCase{name: "G3/a worker's VMI, virt-controller", as: virtController, obj: kubevirtObject("VirtualMachineInstance", workerVM,
			map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"},
			vmiSpecOf([]any{volume("system", "dataVolume", named(workerDisk)),
				volume("cloudinit", "cloudInitNoCloud", map[string]any{"secretRef": named(workerVM + "-x-bootstrap-data-userdata")})}, nil), nil)},
		guardCase{name: "G3/a worker's VMI, tenant", as: tenantUser, obj: kubevirtObject("VirtualMachineInstance", workerVM,
			map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"},
			vmiSpecOf([]any{volume("cloudinit", "cloudInitNoCloud", map[string]any{"secretRef": named(workerVM + "-x-bootstrap-data-userdata")})}, nil), nil),
			refused: true, says: sayG3Disks}, // the API server states the first rule that refuses: its labels
		guardCase{name: "G3/a worker's machine config in an unlabelled VMI, tenant", as: tenantUser, obj: kubevirtObject("VirtualMachineInstance", "steal-machine", nil,
			vmiSpecOf([]any{volume("cloudinit", "cloudInitNoCloud", map[string]any{"secretRef": named(workerVM + "-x-bootstrap-data-userdata")})}, nil), nil),
			refused: true, says: sayG3Credentials},
	)

	// Copies by name.
	ref := func(kind, name string) map[string]any {
		return map[string]any{"apiGroup": "kubevirt.io", "kind": kind, "name": name}
	}
	clone := func(source, target string, patches ...any) *unstructured.Unstructured {
		spec := map[string]any{"source": ref("VirtualMachine", source), "target": ref("VirtualMachine", target)}
		if patches != nil {
			spec["patches"] = patches
		}
		return obj("clone.kubevirt.io/v1beta1", "VirtualMachineClone", guardNS, "clone", map[string]any{"spec": spec})
	}
	restore := func(target, restoreName string, patches ...any) *unstructured.Unstructured {
		spec := map[string]any{"target": ref("VirtualMachine", target), "virtualMachineSnapshotName": "own-snap",
			"volumeRestoreOverrides": []any{map[string]any{"volumeName": "system", "restoreName": restoreName}}}
		if patches != nil {
			spec["patches"] = patches
		}
		return obj("snapshot.kubevirt.io/v1beta1", "VirtualMachineRestore", guardNS, "restore", map[string]any{"spec": spec})
	}
	snapshot := func(source string) *unstructured.Unstructured {
		return obj("snapshot.kubevirt.io/v1beta1", "VirtualMachineSnapshot", guardNS, "snap", map[string]any{"spec": map[string]any{"source": ref("VirtualMachine", source)}})
	}
	export := func(pvc string) *unstructured.Unstructured {
		return obj("export.kubevirt.io/v1beta1", "VirtualMachineExport", guardNS, "export", map[string]any{"spec": map[string]any{
			"source": map[string]any{"apiGroup": "", "kind": "PersistentVolumeClaim", "name": pvc}}})
	}
	backup := func(source, pvc string) *unstructured.Unstructured {
		return obj("backup.kubevirt.io/v1alpha1", "VirtualMachineBackup", guardNS, "backup", map[string]any{"spec": map[string]any{
			"source": ref("VirtualMachine", source), "mode": "Push", "pvcName": pvc}})
	}
	tracker := func(source string) *unstructured.Unstructured {
		return obj("backup.kubevirt.io/v1alpha1", "VirtualMachineBackupTracker", guardNS, "tracker", map[string]any{"spec": map[string]any{
			"source": ref("VirtualMachine", source)}})
	}
	secretPatch := `{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "kc", "secret": {"secretName": "computeplane-admin-kubeconfig"}}}`
	ownPatch := `{"op": "add", "path": "/spec/template/metadata/labels/app", "value": "own"}`
	escapedSecretPatch := `{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "kc", "secret": {"secretName": "\u0063omputeplane-admin-kubeconfig"}}}`
	escapedLabelPatch := `{"op": "add", "path": "/spec/template/metadata/labels/cluster\u002ex-k8s.io~1cluster-name", "value": "computeplane"}`
	escapedAccountPatch := `{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "sa", "serviceAccount": {"serviceAccountName": "\u0063omputeplane-installer"}}}`
	placeholderPatch := `{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "kc", "secret": {"secretName": "own-config"}}}`
	copyPatch := `{"op": "copy", "from": "/metadata/annotations/note", "path": "/spec/template/spec/volumes/1/secret/secretName"}`
	movePatch := `{"op" : "move", "from": "/metadata/annotations/note", "path": "/spec/template/metadata/labels/app"}`
	userDataPatch := `{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "ci", "cloudInitNoCloud": {"userData": "#cloud-config\nwrite_files:\n- path: /etc/motd\n  content: \"own\"\n"}}}`
	cases = append(cases,
		guardCase{name: "G3/clone of a worker, tenant", as: tenantUser, obj: clone(workerVM, "own-copy"), refused: true, says: sayG3Copies},
		guardCase{name: "G3/clone onto a worker's name, tenant", as: tenantUser, obj: clone("own", workerVM), refused: true, says: sayG3Copies},
		guardCase{name: "G3/clone patched with the kubeconfig, tenant", as: tenantUser, obj: clone("own", "own-copy", secretPatch), refused: true, says: sayG3Copies},
		guardCase{name: "G3/clone of the tenant's own VM, patched", as: tenantUser, obj: clone("own", "own-copy", ownPatch)},
		guardCase{name: "G3/restore onto a worker, tenant", as: tenantUser, obj: restore(workerVM, "own-disk"), refused: true, says: sayG3Copies},
		guardCase{name: "G3/restore into a worker's disk name, tenant", as: tenantUser, obj: restore("own", workerDisk), refused: true, says: sayG3Copies},
		guardCase{name: "G3/restore patched with the kubeconfig, tenant", as: tenantUser, obj: restore("own", "own-disk", secretPatch), refused: true, says: sayG3Copies},
		guardCase{name: "G3/restore of the tenant's own VM", as: tenantUser, obj: restore("own", "own-disk", ownPatch)},
		// Patches judged by what they do (issue 40): escapes KubeVirt
		// decodes, and copies from fields no rule reads.
		guardCase{name: "G3/clone patched with the kubeconfig, escaped, tenant", as: tenantUser, obj: clone("own", "own-copy", escapedSecretPatch), refused: true, says: sayG3Patches},
		guardCase{name: "G3/clone patched with the cluster's label, escaped, tenant", as: tenantUser, obj: clone("own", "own-copy", escapedLabelPatch), refused: true, says: sayG3Patches},
		guardCase{name: "G3/clone copying an annotation into a Secret volume, tenant", as: tenantUser, obj: clone("own", "own-copy", placeholderPatch, copyPatch), refused: true, says: sayG3Patches},
		guardCase{name: "G3/restore patched with the installer, escaped, tenant", as: tenantUser, obj: restore("own", "own-disk", escapedAccountPatch), refused: true, says: sayG3Patches},
		guardCase{name: "G3/restore moving an annotation into a label, tenant", as: tenantUser, obj: restore("own", "own-disk", movePatch), refused: true, says: sayG3Patches},
		guardCase{name: "G3/clone patched with the kubeconfig, escaped, virt-controller", as: virtController, obj: clone("own", "own-copy", escapedSecretPatch)},
		guardCase{name: "G3/clone of the tenant's own VM, a Secret volume of its own and user data", as: tenantUser, obj: clone("own", "own-copy", placeholderPatch, userDataPatch)},
		guardCase{name: "G3/snapshot of a worker, tenant", as: tenantUser, obj: snapshot(workerVM), refused: true, says: sayG3Disks},
		guardCase{name: "G3/snapshot of the tenant's own VM", as: tenantUser, obj: snapshot("own")},
		guardCase{name: "G3/export of a worker's disk, tenant", as: tenantUser, obj: export(workerDisk), refused: true, says: sayG3Disks},
		guardCase{name: "G3/export of the tenant's own disk", as: tenantUser, obj: export("own-disk")},
		guardCase{name: "G3/backup of a worker, tenant", as: tenantUser, obj: backup(workerVM, "own-backup"), refused: true, says: sayG3Copies},
		guardCase{name: "G3/backup into a worker's disk, tenant", as: tenantUser, obj: backup("own", workerDisk), refused: true, says: sayG3Copies},
		guardCase{name: "G3/backup of the tenant's own VM", as: tenantUser, obj: backup("own", "own-backup")},
		guardCase{name: "G3/backup tracker of a worker, tenant", as: tenantUser, obj: tracker(workerVM), refused: true, says: sayG3Copies},
		guardCase{name: "G3/backup tracker of the tenant's own VM", as: tenantUser, obj: tracker("own")},
	)

	// Break-glass: a worker stuck in deletion behind a finalizer that no
	// controller will remove. A cluster administrator may delete it and
	// remove its finalizers; nobody else may.
	stuck := vm(guardNS, "computeplane-md0-stuck", map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"},
		map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"}, pvcVolume("computeplane-md0-stuck-disk-system"), nil)
	stuck.SetFinalizers([]string{"e2e.computeplane.dev/stuck"})
	cases = append(cases,
		guardCase{name: "break-glass/CAPK creates a worker", as: capkManager, op: "create", obj: stuck},
		guardCase{name: "break-glass/tenant deletes it", as: tenantUser, op: "delete", obj: stuck, refused: true, says: sayG3Owner},
		guardCase{name: "break-glass/system:masters deletes it", as: asAdmin, op: "delete", obj: stuck},
		guardCase{name: "break-glass/tenant removes its finalizers", as: tenantUser, op: "unfinalize", obj: stuck, refused: true, says: sayG3Owner},
		guardCase{name: "break-glass/cozystack-api removes its finalizers", as: cozystackAPI, op: "unfinalize", obj: stuck, refused: true, says: sayG3Owner},
		guardCase{name: "break-glass/system:masters removes its finalizers", as: asAdmin, op: "unfinalize", obj: stuck},
	)
	return cases
}
