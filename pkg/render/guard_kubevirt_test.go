package render_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/admission"
)

// The guard against VMs that take a ComputePlane's credentials, accounts or
// disks (issue 26), field by field, in every KubeVirt kind that carries a
// VirtualMachineInstanceSpec; field names as in kubevirt.io/api v1.8.4
// (docs/guard.md lists them).

const (
	virtController = "system:serviceaccount:cozy-kubevirt:kubevirt-controller"
	workerDiskName = "computeplane-md0-abcde-fghij-disk-system"
)

// kubevirtKinds write a VirtualMachineInstanceSpec (spec, flow YAML) with
// its template's labels (a flow map) as each kind carries it; vmExtra are
// more fields of the VirtualMachineSpec, where the kind has one ("" where
// not).
var kubevirtKinds = []struct {
	kind   string
	hasVM  bool
	object func(name, labels, spec, vmExtra string) string
}{
	{"VirtualMachine", true, func(name, labels, spec, vmExtra string) string {
		return fmt.Sprintf("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s, namespace: tenant-acme}\nspec: {runStrategy: Always%s, template: {metadata: {labels: %s}, spec: %s}}\n", name, vmExtra, labels, spec)
	}},
	{"VirtualMachineInstance", false, func(name, labels, spec, _ string) string {
		return fmt.Sprintf("apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: %s, namespace: tenant-acme, labels: %s}\nspec: %s\n", name, labels, spec)
	}},
	{"VirtualMachineInstanceReplicaSet", false, func(name, labels, spec, _ string) string {
		return fmt.Sprintf("apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceReplicaSet\nmetadata: {name: %s, namespace: tenant-acme}\nspec: {replicas: 1, selector: {matchLabels: {app: x}}, template: {metadata: {labels: %s}, spec: %s}}\n", name, labels, spec)
	}},
	{"VirtualMachinePool", true, func(name, labels, spec, vmExtra string) string {
		return fmt.Sprintf("apiVersion: pool.kubevirt.io/v1beta1\nkind: VirtualMachinePool\nmetadata: {name: %s, namespace: tenant-acme}\nspec: {replicas: 1, selector: {matchLabels: {app: x}}, virtualMachineTemplate: {metadata: {labels: {app: x}}, spec: {runStrategy: Always%s, template: {metadata: {labels: %s}, spec: %s}}}}\n", name, vmExtra, labels, spec)
	}},
	{"VirtualMachineSnapshotContent", true, func(name, labels, spec, vmExtra string) string {
		return fmt.Sprintf("apiVersion: snapshot.kubevirt.io/v1beta1\nkind: VirtualMachineSnapshotContent\nmetadata: {name: %s, namespace: tenant-acme}\nspec: {source: {virtualMachine: {metadata: {name: %s}, spec: {runStrategy: Always%s, template: {metadata: {labels: %s}, spec: %s}}}}}\n", name, name, vmExtra, labels, spec)
	}},
}

// vmiSpec is a VirtualMachineInstanceSpec with the volumes given and more
// fields (flow YAML).
func vmiSpec(volumes string, more ...string) string {
	return "{domain: {devices: {}}, volumes: [" + volumes + "]" + strings.Join(more, "") + "}"
}

func TestGuardKubeVirt(t *testing.T) { eachGuardForm(t, testGuardKubeVirt) }

func testGuardKubeVirt(t *testing.T, platform string) {
	policy, _ := guardObjects(t, renderGuardFleet(t, platform))
	g := compileGuard(t, policy)
	const (
		credential = "would hand its guest a credential of the tenant's ComputePlane"
		disks      = "only the platform's controllers may use them"
		ownLabels  = "{app: mine}"
	)
	ssh := func(secret string) string {
		return ", accessCredentials: [{sshPublicKey: {source: {secret: {secretName: " + secret + "}}, propagationMethod: {noCloud: {}}}}]"
	}
	password := func(secret string) string {
		return ", accessCredentials: [{userPassword: {source: {secret: {secretName: " + secret + "}}, propagationMethod: {qemuGuestAgent: {}}}}]"
	}
	utility := func(claim string) string { return ", utilityVolumes: [{name: dump, claimName: " + claim + "}]" }
	root := "{name: root, containerDisk: {image: quay.io/containerdisks/fedora:41}}"

	// Each field of a VirtualMachineInstanceSpec: refused as named, and
	// admitted with a name of the tenant's own.
	fields := []struct {
		field             string
		refused, admitted string // VirtualMachineInstanceSpecs
		labels            string // the template's labels when refused
		want              string
	}{
		{"volumes[].secret.secretName (admin kubeconfig)", vmiSpec("{name: kc, secret: {secretName: computeplane-admin-kubeconfig}}"), vmiSpec("{name: kc, secret: {secretName: my-app-config}}"), "", credential},
		{"volumes[].secret.secretName (CA)", vmiSpec("{name: kc, secret: {secretName: computeplane-ca}}"), "", "", credential},
		{"volumes[].secret.secretName (Talos secrets)", vmiSpec("{name: kc, secret: {secretName: computeplane-talos}}"), "", "", credential},
		{"volumes[].secret.secretName (talosconfig)", vmiSpec("{name: kc, secret: {secretName: computeplane-talosconfig}}"), "", "", credential},
		{"volumes[].secret.secretName (a worker's machine config)", vmiSpec("{name: kc, secret: {secretName: computeplane-md0-abcde-fghij-bootstrap-data}}"), "", "", credential},
		{"volumes[].cloudInitNoCloud.secretRef", vmiSpec(root + ", {name: ci, cloudInitNoCloud: {secretRef: {name: computeplane-md0-abcde-fghij-bootstrap-data-userdata}}}"), vmiSpec(root + ", {name: ci, cloudInitNoCloud: {secretRef: {name: my-userdata}}}"), "", credential},
		{"volumes[].cloudInitNoCloud.networkDataSecretRef", vmiSpec(root + ", {name: ci, cloudInitNoCloud: {userData: x, networkDataSecretRef: {name: computeplane-kubeconfig}}}"), vmiSpec(root + ", {name: ci, cloudInitNoCloud: {userData: x, networkDataSecretRef: {name: my-network}}}"), "", credential},
		{"volumes[].cloudInitConfigDrive.secretRef", vmiSpec(root + ", {name: ci, cloudInitConfigDrive: {secretRef: {name: computeplane-sa-certificate}}}"), vmiSpec(root + ", {name: ci, cloudInitConfigDrive: {secretRef: {name: my-userdata}}}"), "", credential},
		{"volumes[].cloudInitConfigDrive.networkDataSecretRef", vmiSpec(root + ", {name: ci, cloudInitConfigDrive: {userData: x, networkDataSecretRef: {name: computeplane-datastore-config}}}"), vmiSpec(root + ", {name: ci, cloudInitConfigDrive: {userData: x, networkDataSecretRef: {name: my-network}}}"), "", credential},
		{"volumes[].sysprep.secret", vmiSpec(root + ", {name: sp, sysprep: {secret: {name: computeplane-admin-kubeconfig}}}"), vmiSpec(root + ", {name: sp, sysprep: {secret: {name: my-unattend}}}"), "", credential},
		{"volumes[].containerDisk.imagePullSecret", vmiSpec("{name: root, containerDisk: {image: quay.io/x/y:1, imagePullSecret: computeplane-admin-kubeconfig}}"), vmiSpec("{name: root, containerDisk: {image: quay.io/x/y:1, imagePullSecret: my-pull-secret}}"), "", credential},
		{"accessCredentials[].sshPublicKey.source.secret.secretName", vmiSpec(root, ssh("computeplane-ssh-keys")), vmiSpec(root, ssh("my-keys")), "", credential},
		{"accessCredentials[].userPassword.source.secret.secretName", vmiSpec(root, password("computeplane-talos-ca")), vmiSpec(root, password("my-password")), "", credential},
		{"volumes[].serviceAccount.serviceAccountName (installer)", vmiSpec(root + ", {name: sa, serviceAccount: {serviceAccountName: computeplane-installer}}"), vmiSpec(root + ", {name: sa, serviceAccount: {serviceAccountName: default}}"), "", credential},
		{"volumes[].serviceAccount.serviceAccountName (talos-reconcile)", vmiSpec(root + ", {name: sa, serviceAccount: {serviceAccountName: computeplane-talos-reconcile}}"), "", "", credential},
		{"volumes[].serviceAccount.serviceAccountName (kcsi)", vmiSpec(root + ", {name: sa, serviceAccount: {serviceAccountName: computeplane-kcsi}}"), "", "", credential},
		{"volumes[].serviceAccount.serviceAccountName (kccm)", vmiSpec(root + ", {name: sa, serviceAccount: {serviceAccountName: computeplane-kccm}}"), "", "", credential},
		{"volumes[].dataVolume.name", vmiSpec("{name: system, dataVolume: {name: " + workerDiskName + "}}"), vmiSpec("{name: system, dataVolume: {name: my-disk}}"), "", disks},
		{"volumes[].persistentVolumeClaim.claimName", vmiSpec("{name: system, persistentVolumeClaim: {claimName: " + workerDiskName + "}}"), vmiSpec("{name: system, persistentVolumeClaim: {claimName: my-disk}}"), "", disks},
		{"volumes[].ephemeral.persistentVolumeClaim.claimName", vmiSpec("{name: system, ephemeral: {persistentVolumeClaim: {claimName: " + workerDiskName + "}}}"), vmiSpec("{name: system, ephemeral: {persistentVolumeClaim: {claimName: my-disk}}}"), "", disks},
		{"volumes[].memoryDump.claimName", vmiSpec(root + ", {name: dump, memoryDump: {claimName: " + workerDiskName + "}}"), vmiSpec(root + ", {name: dump, memoryDump: {claimName: my-dump}}"), "", disks},
		{"utilityVolumes[].claimName", vmiSpec(root, utility(workerDiskName)), vmiSpec(root, utility("my-dump")), "", disks},
		{"template labels cluster.x-k8s.io/cluster-name", vmiSpec(root), vmiSpec(root), "{cluster.x-k8s.io/cluster-name: computeplane}", disks},
		{"template labels kamaji.clastix.io/name", vmiSpec(root), "", "{kamaji.clastix.io/name: computeplane}", disks},
	}
	create := func(user, obj string) guardRequest {
		return guardRequest{op: admission.Create, user: user, groups: tenantGroups, object: obj}
	}
	for _, k := range kubevirtKinds {
		for i, f := range fields {
			name := fmt.Sprintf("vm-%d", i)
			labels := f.labels
			if labels == "" {
				labels = ownLabels
			}
			refused := k.object(name, labels, f.refused, "")
			checkAdmission(t, g, k.kind+" "+f.field+", by a tenant user", create(tenantUser, refused), f.want)
			checkAdmission(t, g, k.kind+" "+f.field+", by cozystack-api", create(cozystackAPI, refused), f.want)
			checkAdmission(t, g, k.kind+" "+f.field+", by KubeVirt's controller", create(virtController, refused), "")
			if f.admitted != "" {
				checkAdmission(t, g, k.kind+" "+f.field+", the tenant's own", create(tenantUser, k.object(name, ownLabels, f.admitted, "")), "")
			}
		}
		if !k.hasVM {
			continue
		}
		// The fields of a VirtualMachineSpec: dataVolumeTemplates.
		for _, f := range []struct{ field, refused, admitted string }{
			{"dataVolumeTemplates[].metadata.name", "{metadata: {name: " + workerDiskName + "}, spec: {storage: {}}}", "{metadata: {name: my-disk}, spec: {storage: {}}}"},
			{"dataVolumeTemplates[].spec.source.pvc.name", "{metadata: {name: copy}, spec: {source: {pvc: {name: " + workerDiskName + ", namespace: tenant-acme}}, storage: {}}}", "{metadata: {name: copy}, spec: {source: {pvc: {name: my-disk, namespace: tenant-acme}}, storage: {}}}"},
			{"dataVolumeTemplates[].spec.source.snapshot.name", "{metadata: {name: copy}, spec: {source: {snapshot: {name: computeplane-md0-abcde-fghij-snap, namespace: tenant-acme}}, storage: {}}}", "{metadata: {name: copy}, spec: {source: {snapshot: {name: my-snap, namespace: tenant-acme}}, storage: {}}}"},
		} {
			spec := vmiSpec("{name: system, dataVolume: {name: copy}}")
			checkAdmission(t, g, k.kind+" "+f.field+", by a tenant user", create(tenantUser, k.object("dvt", ownLabels, spec, ", dataVolumeTemplates: ["+f.refused+"]")), disks)
			checkAdmission(t, g, k.kind+" "+f.field+", the tenant's own", create(tenantUser, k.object("dvt", ownLabels, spec, ", dataVolumeTemplates: ["+f.admitted+"]")), "")
		}
	}

	// Where the kinds keep the rest.
	pool := kubevirtKinds[3].object("pool", ownLabels, vmiSpec(root), "")
	poolOfWorkers := edit(t, pool, "virtualMachineTemplate: {metadata: {labels: {app: x}}", "virtualMachineTemplate: {metadata: {labels: {app: x, cluster.x-k8s.io/cluster-name: computeplane}}")
	checkAdmission(t, g, "VirtualMachinePool of VMs labelled as workers", create(tenantUser, poolOfWorkers), disks)
	checkAdmission(t, g, "VirtualMachinePool of the tenant's VMs", create(tenantUser, pool), "")
	checkAdmission(t, g, "VirtualMachinePool updated to mount the kubeconfig", guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, oldObject: pool,
		object: kubevirtKinds[3].object("pool", ownLabels, vmiSpec("{name: kc, secret: {secretName: computeplane-admin-kubeconfig}}"), "")}, credential)
	fleetVM := edit(t, kubevirtKinds[0].object("in-fleet", ownLabels, vmiSpec(root+", {name: sa, serviceAccount: {serviceAccountName: computeplane-fleet}}"), ""), "namespace: tenant-acme", "namespace: flux-system")
	checkAdmission(t, g, "VirtualMachine with the fleet's account, in the fleet's namespace", create(tenantUser, fleetVM), credential)
	checkAdmission(t, g, "VirtualMachine with an account named like the fleet's elsewhere", create(tenantUser, edit(t, fleetVM, "namespace: flux-system", "namespace: tenant-acme")), "")

	// A worker as CAPK makes it, and its VMI as virt-controller does.
	workerVM := edit(t, kubevirtKinds[0].object("computeplane-md0-abcde-fghij", "{cluster.x-k8s.io/cluster-name: computeplane}",
		vmiSpec("{name: system, dataVolume: {name: "+workerDiskName+"}}, {name: cloudinit, cloudInitNoCloud: {secretRef: {name: computeplane-md0-abcde-fghij-bootstrap-data-userdata}}}"), ""),
		"namespace: tenant-acme}", "namespace: tenant-acme, labels: {cluster.x-k8s.io/cluster-name: computeplane}}")
	workerVMI := kubevirtKinds[1].object("computeplane-md0-abcde-fghij", "{cluster.x-k8s.io/cluster-name: computeplane, kubevirt.io/vm: computeplane-md0-abcde-fghij}",
		vmiSpec("{name: system, dataVolume: {name: "+workerDiskName+"}}, {name: cloudinit, cloudInitNoCloud: {secretRef: {name: computeplane-md0-abcde-fghij-bootstrap-data-userdata}}}"), "")
	checkAdmission(t, g, "a worker VM, by CAPK", create(capk, workerVM), "")
	checkAdmission(t, g, "a worker VM, by a tenant user", create(tenantUser, workerVM), credential)
	checkAdmission(t, g, "a worker's VMI, by virt-controller", create(virtController, workerVMI), "")
	checkAdmission(t, g, "a worker's VMI, by a tenant user", create(tenantUser, workerVMI), credential)

	// Copies by name: clones, restores, backups, trackers, DataVolumes.
	clone := "apiVersion: clone.kubevirt.io/v1beta1\nkind: VirtualMachineClone\nmetadata: {name: c, namespace: tenant-acme}\nspec: {source: {apiGroup: kubevirt.io, kind: VirtualMachine, name: mine}, target: {apiGroup: kubevirt.io, kind: VirtualMachine, name: mine-copy}}\n"
	restore := "apiVersion: snapshot.kubevirt.io/v1beta1\nkind: VirtualMachineRestore\nmetadata: {name: r, namespace: tenant-acme}\nspec: {target: {apiGroup: kubevirt.io, kind: VirtualMachine, name: mine}, virtualMachineSnapshotName: mine-snap}\n"
	backup := "apiVersion: backup.kubevirt.io/v1alpha1\nkind: VirtualMachineBackup\nmetadata: {name: b, namespace: tenant-acme}\nspec: {source: {apiGroup: kubevirt.io, kind: VirtualMachine, name: mine}, mode: Push, pvcName: mine-backup}\n"
	tracker := "apiVersion: backup.kubevirt.io/v1alpha1\nkind: VirtualMachineBackupTracker\nmetadata: {name: bt, namespace: tenant-acme}\nspec: {source: {apiGroup: kubevirt.io, kind: VirtualMachine, name: mine}}\n"
	dataVolume := "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: d, namespace: tenant-acme}\nspec: {source: {snapshot: {name: mine-snap, namespace: tenant-acme}}, storage: {}}\n"
	dataSource := "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataSource\nmetadata: {name: ds, namespace: tenant-acme}\nspec: {source: {pvc: {name: mine-disk, namespace: tenant-acme}}}\n"
	const copies = "copies, restores or clones a worker or a disk of the tenant's ComputePlane"
	for _, c := range []struct {
		field, own string
		refused    []string // old, new pairs over own
	}{
		{"VirtualMachineClone spec.source.name", clone, []string{"name: mine}", "name: computeplane-md0-abcde-fghij}"}},
		{"VirtualMachineClone spec.target.name", clone, []string{"name: mine-copy", "name: computeplane-md0-abcde-fghij"}},
		{"VirtualMachineClone spec.patches (a Secret volume)", edit(t, clone, "}}\n", `}, patches: ['{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "x", "secret": {"secretName": "my-config"}}}']}`+"\n"), []string{"my-config", "computeplane-admin-kubeconfig"}},
		{"VirtualMachineClone spec.patches (the installer's account)", edit(t, clone, "}}\n", `}, patches: ['{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "x", "serviceAccount": {"serviceAccountName": "default"}}}']}`+"\n"), []string{`"default"`, `"computeplane-installer"`}},
		{"VirtualMachineClone spec.patches (the cluster's label)", edit(t, clone, "}}\n", `}, patches: ['{"op": "add", "path": "/spec/template/metadata/labels/app", "value": "mine"}']}`+"\n"), []string{"labels/app", "labels/cluster.x-k8s.io~1cluster-name"}},
		{"VirtualMachineRestore spec.target.name", restore, []string{"name: mine}", "name: computeplane-md0-abcde-fghij}"}},
		{"VirtualMachineRestore spec.volumeRestoreOverrides[].restoreName", edit(t, restore, "mine-snap}\n", "mine-snap, volumeRestoreOverrides: [{volumeName: system, restoreName: mine-disk}]}\n"), []string{"restoreName: mine-disk", "restoreName: " + workerDiskName}},
		{"VirtualMachineRestore spec.patches", edit(t, restore, "mine-snap}\n", `mine-snap, patches: ['{"op": "replace", "path": "/metadata/name", "value": "mine-restored"}']}`+"\n"), []string{"mine-restored", "computeplane-md0-abcde-fghij"}},
		{"VirtualMachineBackup spec.source.name", backup, []string{"name: mine}", "name: computeplane-md0-abcde-fghij}"}},
		{"VirtualMachineBackup spec.pvcName", backup, []string{"pvcName: mine-backup", "pvcName: " + workerDiskName}},
		{"VirtualMachineBackupTracker spec.source.name", tracker, []string{"name: mine}", "name: computeplane-md0-abcde-fghij}"}},
		{"DataVolume spec.source.snapshot.name", dataVolume, []string{"name: mine-snap", "name: computeplane-md0-abcde-fghij-snap"}},
		{"DataSource spec.source.pvc.name", dataSource, []string{"name: mine-disk", "name: " + workerDiskName}},
		{"DataSource spec.source.snapshot.name", edit(t, dataSource, "pvc:", "snapshot:"), []string{"name: mine-disk", "name: computeplane-md0-abcde-fghij-snap"}},
	} {
		checkAdmission(t, g, c.field+", the tenant's own", create(tenantUser, c.own), "")
		checkAdmission(t, g, c.field+", naming the cluster, by a tenant user", create(tenantUser, edit(t, c.own, c.refused...)), copies)
	}
	// Patches judged by what they do (issue 40): a name spelled with a
	// JSON escape, which KubeVirt decodes when it applies the patch, and a
	// copy or move from a field no rule reads, are refused whatever they
	// write; plain patches of the tenant's own, with the escapes that
	// decode to no character of a name, are admitted.
	const unread = "carries a JSON patch the guard cannot read"
	withPatches := func(obj, anchor string, patches ...string) string {
		quoted := make([]string, len(patches))
		for i, p := range patches {
			quoted[i] = "'" + p + "'"
		}
		return edit(t, obj, anchor, strings.TrimSuffix(anchor, "}\n")+", patches: ["+strings.Join(quoted, ", ")+"]}\n")
	}
	cloneWith := func(patches ...string) []string { return patches }
	restoreWith := func(patches ...string) []string { return append([]string{"restore"}, patches...) }
	for _, c := range []struct {
		name    string
		patches []string // the first "restore": a restore's, else a clone's
		want    string
	}{
		{"clone, the admin kubeconfig with an escaped letter", cloneWith(`{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "x", "secret": {"secretName": "\u0063omputeplane-admin-kubeconfig"}}}`), unread},
		{"clone, the admin kubeconfig with an escaped dash", cloneWith(`{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "x", "secret": {"secretName": "computeplane\u002dadmin-kubeconfig"}}}`), unread},
		{"clone, the cluster's label with an escaped dot", cloneWith(`{"op": "add", "path": "/spec/template/metadata/labels/cluster\u002ex-k8s.io~1cluster-name", "value": "computeplane"}`), unread},
		{"clone, a worker's disk with an escaped letter", cloneWith(`{"op": "replace", "path": "/spec/template/spec/volumes/0", "value": {"name": "system", "dataVolume": {"name": "\u0063omputeplane-md0-abcde-fghij-disk-system"}}}`), unread},
		{"clone, the cluster's label as an escaped key", cloneWith(`{"op": "add", "path": "/spec/template/metadata/labels", "value": {"app": "mine", "cluster\u002ex-k8s.io/cluster-name": "computeplane"}}`), unread},
		{"restore, the installer's account with an escaped letter", restoreWith(`{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "sa", "serviceAccount": {"serviceAccountName": "\u0063omputeplane-installer"}}}`), unread},
		{"clone, copy from an annotation into a Secret volume", cloneWith(`{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "x", "secret": {"secretName": "placeholder"}}}`, `{"op": "copy", "from": "/metadata/annotations/note", "path": "/spec/template/spec/volumes/1/secret/secretName"}`), unread},
		{"clone, move with spaces around the colon", cloneWith(`{"from": "/metadata/annotations/note", "op" :  "move", "path": "/spec/template/metadata/labels/app"}`), unread},
		{"restore, copy from an annotation into a service account", restoreWith(`{"op":"copy","from":"/metadata/annotations/sa","path":"/spec/template/spec/volumes/0/serviceAccount/serviceAccountName"}`), unread},
		{"clone, a duplicate op key ending in copy", cloneWith(`{"op": "add", "op": "copy", "from": "/metadata/annotations/note", "path": "/spec/template/metadata/labels/app"}`), unread},
		// Controls.
		{"clone, a plain patch of its own", cloneWith(`{"op": "add", "path": "/spec/template/metadata/labels/app", "value": "mine-copy"}`), ""},
		{"clone, a plain Secret volume of its own", cloneWith(`{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "x", "secret": {"secretName": "my-config"}}}`), ""},
		{"clone, user data with newlines and quotes escaped", cloneWith(`{"op": "replace", "path": "/spec/template/spec/volumes/1/cloudInitNoCloud/userData", "value": "#cloud-config\nwrite_files:\n- path: /etc/motd\n  content: \"copy of mine\"\n"}`), ""},
		{"clone, a test, a remove and a replace", cloneWith(`{"op": "test", "path": "/metadata/name", "value": "mine"}`, `{"op": "remove", "path": "/spec/template/metadata/labels/app"}`, `{"op": "replace", "path": "/spec/runStrategy", "value": "Halted"}`), ""},
		{"restore, a plain rename", restoreWith(`{"op": "replace", "path": "/metadata/name", "value": "mine-restored"}`), ""},
	} {
		obj := ""
		if c.patches[0] == "restore" {
			c.patches = c.patches[1:]
			obj = withPatches(restore, "mine-snap}\n", c.patches...)
		} else {
			obj = withPatches(clone, "}}\n", c.patches...)
		}
		// What KubeVirt applies: the patches as encoding/json decodes them.
		// An attack writes a name of the cluster or copies a value once
		// decoded; a control does neither.
		if attack := patchesWrite(t, c.patches); attack != (c.want != "") {
			t.Errorf("%s: decoded, the patches write a name of the cluster or copy a value: %v, want %v", c.name, attack, c.want != "")
		}
		checkAdmission(t, g, c.name+", by a tenant user", create(tenantUser, obj), c.want)
		if c.want != "" {
			checkAdmission(t, g, c.name+", by KubeVirt's controller", create(virtController, obj), "")
		}
	}

	// A DataSource may change: pointed at a worker's disk afterwards.
	checkAdmission(t, g, "DataSource repointed at a worker's disk, by a tenant user",
		guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, oldObject: dataSource, object: edit(t, dataSource, "name: mine-disk", "name: "+workerDiskName)}, copies)

	// Break-glass: a cluster administrator deletes a stuck worker or
	// removes its finalizers, and nothing more.
	admins := []string{"system:masters", "system:authenticated"}
	stuck := edit(t, workerVM, "labels: {cluster.x-k8s.io/cluster-name: computeplane}}", "labels: {cluster.x-k8s.io/cluster-name: computeplane}, finalizers: [kubevirt.io/virtualMachineControllerFinalize]}")
	const owner = "only the platform's controllers may create, change or delete it"
	for _, c := range []struct {
		name string
		req  guardRequest
		want string
	}{
		{"an administrator deletes a worker", guardRequest{op: admission.Delete, user: admin, groups: admins, oldObject: stuck}, ""},
		{"an administrator removes its finalizers", guardRequest{op: admission.Update, user: admin, groups: admins, oldObject: stuck, object: workerVM}, ""},
		{"an administrator adds a finalizer", guardRequest{op: admission.Update, user: admin, groups: admins, oldObject: workerVM, object: stuck}, owner},
		{"an administrator changes its spec", guardRequest{op: admission.Update, user: admin, groups: admins, oldObject: stuck, object: edit(t, workerVM, "runStrategy: Always", "runStrategy: Halted")}, owner},
		{"an administrator opens it to the API server", guardRequest{op: admission.Update, user: admin, groups: admins, oldObject: stuck,
			object: edit(t, stuck, "labels: {cluster.x-k8s.io/cluster-name: computeplane}, finalizers", "labels: {cluster.x-k8s.io/cluster-name: computeplane, policy.cozystack.io/allow-to-apiserver: \"true\"}, finalizers")}, owner},
		{"an administrator annotates it", guardRequest{op: admission.Update, user: admin, groups: admins, oldObject: stuck,
			object: edit(t, stuck, "finalizers:", "annotations: {kubevirt.io/x: y}, finalizers:")}, owner},
		{"an administrator drops its cluster name", guardRequest{op: admission.Update, user: admin, groups: admins, oldObject: stuck,
			object: edit(t, stuck, "labels: {cluster.x-k8s.io/cluster-name: computeplane}, ", "")}, "cannot be added, changed or removed"},
		{"an administrator creates a worker", guardRequest{op: admission.Create, user: admin, groups: admins, object: workerVM}, owner},
		{"a tenant user deletes it", guardRequest{op: admission.Delete, user: tenantUser, groups: tenantGroups, oldObject: stuck}, owner},
		{"a tenant user removes its finalizers", guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, oldObject: stuck, object: workerVM}, owner},
		{"the same user outside system:masters deletes it", guardRequest{op: admission.Delete, user: admin, groups: tenantGroups, oldObject: stuck}, owner},
	} {
		checkAdmission(t, g, c.name, c.req, c.want)
	}
}

// TestGuardKubeVirtCost: the largest VMs KubeVirt's schema allows
// (+kubebuilder:validation:MaxItems 256 on volumes, accessCredentials and
// utilityVolumes) are evaluated within the API server's runtime cost budget
// for one policy (checkAdmission fails on an evaluation error, which is
// what running out of budget is). The API server does not estimate a
// policy's cost when it admits the policy: only evaluations are limited.
func TestGuardKubeVirtCost(t *testing.T) { eachGuardForm(t, testGuardKubeVirtCost) }

func testGuardKubeVirtCost(t *testing.T, platform string) {
	policy, _ := guardObjects(t, renderGuardFleet(t, platform))
	g := compileGuard(t, policy)
	var volumes, creds, utility, dvts []string
	kinds := []string{
		"secret: {secretName: s%d}", "cloudInitNoCloud: {secretRef: {name: s%d}, networkDataSecretRef: {name: n%d}}",
		"cloudInitConfigDrive: {secretRef: {name: s%d}, networkDataSecretRef: {name: n%d}}", "sysprep: {secret: {name: s%d}}",
		"containerDisk: {image: quay.io/x/y:%d, imagePullSecret: p%d}", "serviceAccount: {serviceAccountName: sa%d}",
		"dataVolume: {name: d%d}", "persistentVolumeClaim: {claimName: c%d}", "ephemeral: {persistentVolumeClaim: {claimName: e%d}}",
		"memoryDump: {claimName: m%d}",
	}
	for i := range 256 {
		k := kinds[i%len(kinds)]
		volumes = append(volumes, fmt.Sprintf("{name: v%d, "+k+"}", append([]any{i}, repeat(i, strings.Count(k, "%d"))...)...))
		creds = append(creds, fmt.Sprintf("{sshPublicKey: {source: {secret: {secretName: k%d}}, propagationMethod: {noCloud: {}}}}", i))
		utility = append(utility, fmt.Sprintf("{name: u%d, claimName: u%d}", i, i))
		dvts = append(dvts, fmt.Sprintf("{metadata: {name: t%d}, spec: {source: {pvc: {name: p%d, namespace: tenant-acme}}, storage: {}}}", i, i))
	}
	spec := vmiSpec(strings.Join(volumes, ", "), ", accessCredentials: ["+strings.Join(creds, ", ")+"]", ", utilityVolumes: ["+strings.Join(utility, ", ")+"]")
	for _, k := range kubevirtKinds {
		extra := ""
		if k.hasVM {
			extra = ", dataVolumeTemplates: [" + strings.Join(dvts, ", ") + "]"
		}
		obj := k.object("big", "{app: big}", spec, extra)
		checkAdmission(t, g, k.kind+" at KubeVirt's limits, created", guardRequest{op: admission.Create, user: tenantUser, groups: tenantGroups, object: obj}, "")
		if k.kind == "VirtualMachine" || k.kind == "VirtualMachinePool" {
			checkAdmission(t, g, k.kind+" at KubeVirt's limits, updated", guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, object: obj, oldObject: obj}, "")
		}
	}
}

// patchesWrite decodes JSON patch operations as KubeVirt does (encoding/json)
// and reports whether one copies or moves a value, or writes a name of
// the ComputePlane (computeplane-..., a cluster.x-k8s.io label) in a key,
// a value or a path.
func patchesWrite(t *testing.T, patches []string) bool {
	t.Helper()
	var found bool
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			found = found || strings.Contains(v, "computeplane-") || strings.Contains(v, "cluster.x-k8s.io")
		case map[string]any:
			for k, e := range v {
				walk(k)
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, p := range patches {
		var op map[string]any
		if err := json.Unmarshal([]byte(p), &op); err != nil {
			t.Fatalf("patch %s: %v", p, err)
		}
		found = found || op["op"] == "copy" || op["op"] == "move"
		walk(op)
	}
	return found
}

func repeat(v, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}
