package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// The guard's CEL. The values of the fleet come in as variables (see
// guardVariables); what follows is the same for every fleet.
//
// Every matched request is one of: a HelmRelease or Kustomization (CREATE,
// UPDATE), a VirtualMachine (CREATE, UPDATE, DELETE), a
// VirtualMachineInstanceReplicaSet or VirtualMachinePool (CREATE, UPDATE),
// a Pod, a token request of a service account, a Secret, a DataVolume, a
// PersistentVolumeClaim, a VolumeSnapshot, a VirtualMachineInstance or one
// of KubeVirt's copies (snapshot, snapshot content, restore, clone, export,
// backup, backup tracker; CREATE), a RoleBinding or ClusterRoleBinding
// (CREATE, UPDATE), or one of Flux's sources, main resource (CREATE,
// UPDATE) or status (UPDATE). So object is null only for a VM's DELETE
// and oldObject only on CREATE; every expression says so. Status updates
// of the other kinds go to their status subresource, which the policy
// does not match: controllers' status writes never reach it; a source's
// status is its artifact (URL and digest), which is what
// kustomize-controller fetches, so G5 judges it. Fields are read with CEL's
// optional selection (a.?b.orValue(x)), which never fails on a missing
// field: with failurePolicy Fail an evaluation error would refuse the
// request.
const (
	celIsHelmRelease = `request.resource.group == 'helm.toolkit.fluxcd.io' &&
request.resource.resource == 'helmreleases'`
	celIsFluxObject = `variables.isHelmRelease ||
(request.resource.group == 'kustomize.toolkit.fluxcd.io' &&
  request.resource.resource == 'kustomizations')`
	celIsVirtualMachine = `request.resource.group == 'kubevirt.io' &&
request.resource.resource == 'virtualmachines'`
	celIsPod = `request.resource.group == '' && request.resource.resource == 'pods' &&
request.?subResource.orValue('') == ''`
	celIsTokenRequest = `request.resource.group == '' &&
request.resource.resource == 'serviceaccounts' &&
request.?subResource.orValue('') == 'token'`
	celIsSecret  = `request.resource.group == '' && request.resource.resource == 'secrets'`
	celIsBinding = `request.resource.group == 'rbac.authorization.k8s.io' &&
request.resource.resource in ['rolebindings', 'clusterrolebindings']`
	// The KubeVirt kinds that carry a VirtualMachineInstanceSpec (kubevirt.io/api
	// core/v1, pool/v1beta1, snapshot/v1beta1), beside the VirtualMachine.
	celIsVMI = `request.resource.group == 'kubevirt.io' &&
request.resource.resource == 'virtualmachineinstances'`
	celIsVMIReplicaSet = `request.resource.group == 'kubevirt.io' &&
request.resource.resource == 'virtualmachineinstancereplicasets'`
	celIsVMPool = `request.resource.group == 'pool.kubevirt.io' &&
request.resource.resource == 'virtualmachinepools'`
	celIsSnapshotContent = `request.resource.group == 'snapshot.kubevirt.io' &&
request.resource.resource == 'virtualmachinesnapshotcontents'`
	// isDiskCopy: what copies a disk or a VM by name: CDI's DataVolumes
	// and DataSources (a DataVolume's spec.sourceRef names a DataSource,
	// whose spec.source.pvc or snapshot names the disk), CSI copies, and
	// KubeVirt's snapshots, restores, clones, exports and backups.
	celIsDiskCopy = `(request.resource.group == 'cdi.kubevirt.io' &&
  request.resource.resource in ['datavolumes', 'datasources']) ||
(request.resource.group == '' && request.resource.resource == 'persistentvolumeclaims') ||
(request.resource.group == 'snapshot.storage.k8s.io' && request.resource.resource == 'volumesnapshots') ||
(request.resource.group == 'snapshot.kubevirt.io' &&
  request.resource.resource in ['virtualmachinesnapshots', 'virtualmachinerestores']) ||
(request.resource.group == 'clone.kubevirt.io' && request.resource.resource == 'virtualmachineclones') ||
(request.resource.group == 'export.kubevirt.io' && request.resource.resource == 'virtualmachineexports') ||
(request.resource.group == 'backup.kubevirt.io' &&
  request.resource.resource in ['virtualmachinebackups', 'virtualmachinebackuptrackers'])`

	celFromFlux     = `request.userInfo.username in variables.fluxIdentities`
	celFromHelm     = `request.userInfo.username in variables.helmIdentities`
	celFromPlatform = `request.userInfo.username in variables.platformIdentities`
	celFromSource   = `request.userInfo.username in variables.sourceIdentities`
	// fromInstaller: the cluster installer of the request's namespace
	// (delivery: Direct only; installerUser is then its user name there).
	celFromInstaller = `variables.directDelivery && request.namespace != '' &&
request.userInfo.username == 'system:serviceaccount:' + request.namespace + ':' + variables.installerAccount`
	// fromAdmin: a cluster administrator, who applies the bootstrap's root
	// Kustomization and the fleet's account by hand.
	celFromAdmin = `has(request.userInfo.groups) &&
request.userInfo.groups.exists(g, g == 'system:masters')`

	// routedKinds: the kinds placed on the ComputePlane that the kind
	// labels of the object, or of the object before the update (so that
	// dropping the label does not leave the rule), name, in any case.
	celRoutedKinds = `!variables.isHelmRelease ? [] :
variables.computePlaneKinds.filter(k, [object, oldObject].exists(o,
  o != null &&
  ['` + wire.ApplicationKindLabel + `', '` + wire.RoutedKindLabel + `'].exists(l,
    o.metadata.?labels[?l].orValue('').lowerAscii() == k.lowerAscii())))`
	// routedChart: the object's chartRef, before or after the update, is
	// one of a definition placed on the ComputePlane (a namespace left out
	// of the chartRef is the release's own).
	celRoutedChart = `variables.isHelmRelease &&
variables.computePlaneCharts.exists(c, [object, oldObject].exists(o,
  o != null &&
  o.?spec.?chartRef.?kind.orValue('') == c.kind &&
  o.?spec.?chartRef.?name.orValue('') == c.name &&
  o.?spec.?chartRef.?namespace.orValue(o.metadata.namespace) ==
    (c.namespace != '' ? c.namespace : o.metadata.namespace)))`

	// kubeConfig as it is before and after the request; null when unset.
	celNewKubeConfig = `object != null && has(object.spec) && has(object.spec.kubeConfig) ?
object.spec.kubeConfig : null`
	celOldKubeConfig = `oldObject != null && has(oldObject.spec) && has(oldObject.spec.kubeConfig) ?
oldObject.spec.kubeConfig : null`

	// specChanged: a HelmRelease or Kustomization created, or updated in
	// any field of its spec but spec.suspend (suspending moves nothing).
	// Changes of metadata only (labels of Flux's sharding, finalizers,
	// reconcile requests) are not in scope.
	celSpecChanged = `variables.isFluxObject &&
(request.operation == 'CREATE' ||
  object.spec.exists(k, k != 'suspend' &&
    (!(k in oldObject.spec) || object.spec[k] != oldObject.spec[k])) ||
  oldObject.spec.exists(k, k != 'suspend' && !(k in object.spec)))`
	// setsKubeConfig: a kubeConfig is added, changed or removed, or the spec
	// of an object that has one changes (what runs with a kubeConfig is as
	// sensitive as the kubeConfig).
	celSetsKubeConfig = `variables.specChanged &&
(variables.newKubeConfig != null || variables.oldKubeConfig != null)`

	// celIsCredential: the Secret named n is one of the cluster's
	// credentials (model.ClusterCredentials), or a worker's machine
	// configuration (<release>-<machine><suffix>, model.MachineCredentialSuffixes).
	celIsCredential = `(n in variables.credentials ||
    (n.startsWith(variables.clusterRelease + '-') &&
      variables.machineCredentialSuffixes.exists(s, n.endsWith(s))))`

	// namesCredential / oldNamesCredential: the kubeConfig after / before
	// the request reads one of a ComputePlane's credentials.
	celNamesCredential = `variables.newKubeConfig != null &&
[variables.newKubeConfig.?secretRef.?name.orValue('')].exists(n, ` + celIsCredential + `)`
	celOldNamesCredential = `variables.oldKubeConfig != null &&
[variables.oldKubeConfig.?secretRef.?name.orValue('')].exists(n, ` + celIsCredential + `)`
	// readsCredentials: the object hands one of a ComputePlane's
	// credentials to what it runs, through a HelmRelease's valuesFrom or a
	// Kustomization's postBuild.substituteFrom.
	celReadsCredentials = `variables.specChanged &&
(object.?spec.?valuesFrom.orValue([]) +
  object.?spec.?postBuild.?substituteFrom.orValue([])).exists(v,
  v.?kind.orValue('') == 'Secret' &&
  [v.?name.orValue('')].exists(n, ` + celIsCredential + `))`

	// usesAccount: a HelmRelease or Kustomization whose spec names the
	// fleet's account (in the fleet's namespace) or a cluster installer:
	// Flux impersonates it for everything the object applies.
	celUsesAccount = `variables.specChanged &&
object.?spec.?serviceAccountName.orValue('') != '' &&
(object.spec.serviceAccountName == variables.installerAccount ||
  (object.metadata.namespace == variables.fleetNamespace &&
    object.spec.serviceAccountName == variables.fleetAccount))`
	// accountOf: the account whose credentials a Pod, a token request or a
	// service-account token Secret carries ('' for other requests).
	celAccountOf = `variables.isPod ? object.?spec.?serviceAccountName.orValue('default') :
variables.isTokenRequest ? request.name :
variables.isSecret && object != null && object.?type.orValue('') == 'kubernetes.io/service-account-token' ?
  object.metadata.?annotations[?'kubernetes.io/service-account.name'].orValue('') :
''`
	celCarriesAccount = `variables.accountOf != '' &&
(variables.accountOf == variables.installerAccount ||
  (request.namespace == variables.fleetNamespace && variables.accountOf == variables.fleetAccount))`
	// bindsAccount: a RoleBinding or ClusterRoleBinding, before or after the
	// update, that binds the fleet's or an installer's roles, or binds
	// anything to the fleet's account or an installer, as a ServiceAccount
	// subject or as a User named like the account (RBAC matches both).
	celBindsAccount = `variables.isBinding && [object, oldObject].exists(o, o != null &&
  (o.roleRef.name in variables.accountRoles ||
    o.roleRef.name.startsWith(variables.installerAccount + '-') ||
    o.?subjects.orValue([]).exists(s,
      (s.kind == 'ServiceAccount' &&
        (s.name == variables.installerAccount ||
          (s.?namespace.orValue(o.metadata.?namespace.orValue('')) == variables.fleetNamespace &&
            s.name == variables.fleetAccount))) ||
      (s.kind == 'User' && s.name.startsWith('system:serviceaccount:') &&
        (s.name.endsWith(':' + variables.installerAccount) ||
          s.name == 'system:serviceaccount:' + variables.fleetNamespace + ':' + variables.fleetAccount)))))`

	// The VM's cluster name before and after the request; "" when unset.
	celOldVMCluster = `oldObject != null ?
oldObject.metadata.?labels[?'` + ClusterNameLabel + `'].orValue('') : ''`
	celNewVMCluster = `object != null ?
object.metadata.?labels[?'` + ClusterNameLabel + `'].orValue('') : ''`
	celIsWorker = `variables.isVirtualMachine &&
(variables.oldVMCluster == variables.clusterRelease ||
  variables.newVMCluster == variables.clusterRelease)`
	// What a request makes VMs of, in KubeVirt's types (kubevirt.io/api
	// v1.8.4, which Cozystack ships). vmTemplates: the VirtualMachines a
	// VirtualMachinePool (spec.virtualMachineTemplate, a
	// VirtualMachineTemplateSpec) or a VirtualMachineSnapshotContent
	// (spec.source.virtualMachine, what a restore writes back) carries.
	celVMTemplates = `object == null ? [] :
variables.isVMPool ? [object.?spec.?virtualMachineTemplate.orValue({})] :
variables.isSnapshotContent ? [object.?spec.?source.?virtualMachine.orValue({})] : []`
	// vmSpecs: every VirtualMachineSpec, the VM's own and the templates'.
	celVMSpecs = `(variables.isVirtualMachine && object != null ? [object.?spec.orValue({})] : []) +
variables.vmTemplates.map(t, t.?spec.orValue({}))`
	// vmiTemplates: every VirtualMachineInstanceTemplateSpec (metadata and
	// spec): a VirtualMachineSpec's template, a replica set's
	// spec.template, and a VirtualMachineInstance itself.
	celVMITemplates = `variables.vmSpecs.map(s, s.?template.orValue({})) +
(object == null ? [] :
  variables.isVMI ? [object] :
  variables.isVMIReplicaSet ? [object.?spec.?template.orValue({})] : [])`
	// vmiSpecs: every VirtualMachineInstanceSpec of the request.
	celVMISpecs = `variables.vmiTemplates.map(t, t.?spec.orValue({}))`

	// claimsWorker: a VM (or a VMI, replica set, pool or snapshot content)
	// made of a ComputePlane's workers: its template carries the
	// cluster's labels (the egress policy and Kamaji select by them), or
	// it mounts, or clones from, a disk of the cluster (every disk of a
	// worker is named <cluster release>-...) through any volume kind that
	// names a claim (Volume: dataVolume, persistentVolumeClaim,
	// ephemeral.persistentVolumeClaim, memoryDump; UtilityVolume) or a
	// DataVolumeTemplateSpec (its name, source.pvc, source.snapshot).
	celClaimsWorker = `(variables.vmTemplates + variables.vmiTemplates).exists(t,
  ['` + ClusterNameLabel + `', '` + ControlPlaneLabel + `'].exists(l,
    t.?metadata.?labels[?l].orValue('') == variables.clusterRelease)) ||
variables.vmiSpecs.exists(s,
  s.?volumes.orValue([]).exists(v,
    [v.?dataVolume.?name.orValue(''),
      v.?persistentVolumeClaim.?claimName.orValue(''),
      v.?ephemeral.?persistentVolumeClaim.?claimName.orValue(''),
      v.?memoryDump.?claimName.orValue('')].exists(n, n.startsWith(variables.clusterRelease + '-'))) ||
  s.?utilityVolumes.orValue([]).exists(u,
    u.?claimName.orValue('').startsWith(variables.clusterRelease + '-'))) ||
variables.vmSpecs.exists(s, s.?dataVolumeTemplates.orValue([]).exists(d,
  [d.?metadata.?name.orValue(''),
    d.?spec.?source.?pvc.?name.orValue(''),
    d.?spec.?source.?snapshot.?name.orValue('')].exists(n, n.startsWith(variables.clusterRelease + '-'))))`
	// isChartAccount: the service account a is the installer, the fleet's
	// account (in the fleet's namespace) or one the cluster chart creates.
	celIsChartAccount = `a != '' && (a == variables.installerAccount ||
  (request.namespace == variables.fleetNamespace && a == variables.fleetAccount) ||
  a in variables.chartAccounts)`
	// vmCarriesCredential: a VM (and the rest) hands its guest one of the
	// cluster's credential Secrets (Volume: secret, cloudInitNoCloud and
	// cloudInitConfigDrive secretRef and networkDataSecretRef,
	// sysprep.secret, containerDisk.imagePullSecret; AccessCredential:
	// sshPublicKey and userPassword source.secret), or the token of an
	// account that reaches the ComputePlane or its Secrets (Volume:
	// serviceAccount; virt-controller then runs the VM's pod as it).
	celVMCarriesCredential = `variables.vmiSpecs.exists(s,
  s.?volumes.orValue([]).exists(v,
    [v.?secret.?secretName.orValue(''),
      v.?cloudInitNoCloud.?secretRef.?name.orValue(''),
      v.?cloudInitNoCloud.?networkDataSecretRef.?name.orValue(''),
      v.?cloudInitConfigDrive.?secretRef.?name.orValue(''),
      v.?cloudInitConfigDrive.?networkDataSecretRef.?name.orValue(''),
      v.?sysprep.?secret.?name.orValue(''),
      v.?containerDisk.?imagePullSecret.orValue('')].exists(n, ` + celIsCredential + `) ||
    [v.?serviceAccount.?serviceAccountName.orValue('')].exists(a, ` + celIsChartAccount + `)) ||
  s.?accessCredentials.orValue([]).exists(c,
    [c.?sshPublicKey.?source.?secret.?secretName.orValue(''),
      c.?userPassword.?source.?secret.?secretName.orValue('')].exists(n, ` + celIsCredential + `)))`
	// copiesDisk: a DataVolume, PersistentVolumeClaim or VolumeSnapshot
	// made from a disk of the cluster (a clone, a restore, a snapshot), or
	// a KubeVirt snapshot, export, backup or clone of a worker or its
	// disks, or a restore or clone onto one (every one is named <cluster
	// release>-...), or a clone or restore whose JSON patches name the
	// cluster's objects, accounts or labels (virt-controller applies them
	// to the VM it writes).
	celCopiesDisk = `variables.isDiskCopy && object != null &&
(([object.?spec.?source.?pvc.?name.orValue(''),
    object.?spec.?source.?snapshot.?name.orValue(''),
    object.?spec.?source.?name.orValue(''),
    object.?spec.?dataSource.?name.orValue(''),
    object.?spec.?dataSourceRef.?name.orValue(''),
    object.?spec.?source.?persistentVolumeClaimName.orValue(''),
    object.?spec.?target.?name.orValue(''),
    object.?spec.?pvcName.orValue('')] +
  object.?spec.?volumeRestoreOverrides.orValue([]).map(o, o.?restoreName.orValue(''))).exists(n,
    n.startsWith(variables.clusterRelease + '-')) ||
  object.?spec.?patches.orValue([]).exists(p,
    [variables.clusterRelease + '-', variables.installerAccount, variables.fleetAccount,
      'cluster.x-k8s.io', 'kamaji.clastix.io'].exists(w, p.contains(w))))`
	// unreadPatches: a clone or restore with a JSON patch the guard cannot
	// read as KubeVirt will: a \u escape (JSON decodes it to any
	// character, so a forbidden name can hide in it; the other escapes
	// decode to characters no name holds, so words stay whole without
	// them), or a copy or move op (the value comes from a field of the
	// VM, its annotations say, which no rule reads). CEL cannot decode
	// JSON, so the guard refuses both wherever they are in the text (a
	// key or value that merely looks like them too); what is left is plain
	// text in which copiesDisk finds every name the patch writes.
	celUnreadPatches = `variables.isDiskCopy && object != null &&
object.?spec.?patches.orValue([]).exists(p,
  p.contains('\\u') || p.matches('"op"\\s*:\\s*"(copy|move)"'))`

	// isFleetSource: a write (or a status write) of one of the fleet's own
	// sources, before or after the request: the source of spec.fleet
	// (its kind's resource, namespace and name), every source object of
	// Flux's two source groups in the wiring namespace named
	// computeplane-... (the wiring's ArtifactGenerators and the
	// ExternalArtifacts the units read, whatever the layout names them,
	// and the baseline chart's source), and the cluster chart's generator
	// and artifact in the platform's namespace. Whoever writes one of them
	// chooses what the fleet's account applies.
	celIsFleetSource = `request.resource.group in ['source.toolkit.fluxcd.io', 'source.extensions.fluxcd.io'] &&
[object, oldObject].exists(o, o != null &&
  ((o.metadata.?namespace.orValue('') == variables.fleetNamespace &&
      o.metadata.?name.orValue('').startsWith('` + FleetSourcePrefix + `')) ||
    variables.fleetSources.exists(s, s.resource == request.resource.resource &&
      s.namespace == o.metadata.?namespace.orValue('') && s.name == o.metadata.?name.orValue(''))))`

	// breakGlass: a cluster administrator deletes a worker VM, or removes
	// finalizers from it and changes nothing else (spec, labels,
	// annotations): what a stuck worker needs when its controllers are
	// gone, without turning the guard off.
	celBreakGlass = `variables.fromAdmin && variables.isVirtualMachine &&
(request.operation == 'DELETE' ||
  (request.operation == 'UPDATE' &&
    object.?spec.orValue({}) == oldObject.?spec.orValue({}) &&
    object.metadata.?labels.orValue({}) == oldObject.metadata.?labels.orValue({}) &&
    object.metadata.?annotations.orValue({}) == oldObject.metadata.?annotations.orValue({}) &&
    object.metadata.?finalizers.orValue([]).all(f, f in oldObject.metadata.?finalizers.orValue([]))))`

	// claimsPool: a HelmRelease, before or after the request, that is a
	// worker pool of the ComputePlane's cluster (SplitPools line): named
	// as its pools are, kubernetes-nodes-<cluster release>-<pool>, or whose
	// values attach it to the cluster (apps/kubernetes-nodes reads
	// cluster and clusterReleaseName). A value of another type names no
	// cluster.
	celClaimsPool = `variables.isHelmRelease && [object, oldObject].exists(o, o != null &&
  (o.metadata.name.startsWith('kubernetes-nodes-' + variables.clusterRelease + '-') ||
    [o.?spec.?values.?cluster.orValue(''), o.?spec.?values.?clusterReleaseName.orValue('')].exists(v,
      type(v) == string && v == variables.clusterRelease)))`

	// The request's object, for messages: namespace/name.
	celTarget = `(object != null ? object : oldObject).metadata.?namespace.orValue('') + '/' +
  (object != null ? object : oldObject).metadata.name`
)

// The rules: expression (true admits) and messageExpression. They are
// written on several lines: what kustomize and kubectl write back (YAML
// with 80-column folding) then keeps them in the same literal blocks, and
// the output of a kustomize build is byte for byte the function's.
const (
	// G1: a release of a kind, or a chart, placed on the ComputePlane runs
	// there. A release being deleted may still lose its finalizers.
	celG1 = `(size(variables.routedKinds) == 0 && !variables.routedChart) ||
has(object.metadata.deletionTimestamp) ||
(variables.newKubeConfig != null &&
  variables.newKubeConfig.?secretRef.?name.orValue('') == variables.kubeconfigSecret &&
  variables.newKubeConfig.?secretRef.?key.orValue('') == variables.kubeconfigKey)`
	msgG1 = `(size(variables.routedKinds) > 0 ? variables.routedKinds[0] + " apps run" : "its chart runs") +
  " on the tenant's ComputePlane: add it to the fleet repository (HelmRelease " +
  ` + celTarget + ` +
  " must reach the ComputePlane through spec.kubeConfig.secretRef name " +
  variables.kubeconfigSecret + ", key " + variables.kubeconfigKey +
  "; without it the app would run on the management cluster)"`

	// G2: only the fleet sets a kubeConfig or reads a ComputePlane's
	// credentials; the namespace's installer for its own cluster's
	// Secrets; the platform's helm-controller a kubeConfig of another
	// cluster (and, under delivery: Platform, the module's cluster).
	celG2 = `!(variables.setsKubeConfig || variables.readsCredentials) || variables.fromFlux ||
(variables.fromInstaller && (variables.newKubeConfig == null || variables.namesCredential)) ||
(variables.fromHelm && (!variables.directDelivery ||
  (!variables.namesCredential && !variables.oldNamesCredential && !variables.readsCredentials)))`
	msgG2 = `request.kind.kind + " " +
  ` + celTarget + ` +
  ": only the fleet (" + variables.fluxIdentities.join(", ") +
  ") may set or change spec.kubeConfig, change the spec of a release that has one, or read a ComputePlane's credentials (" +
  variables.kubeconfigSecret + ", " + variables.clusterRelease + "-kubeconfig, " + variables.clusterRelease +
  "-ca and every other Secret Kamaji and the chart write for it) through valuesFrom or postBuild.substituteFrom" +
  (variables.directDelivery ? ", and a namespace's cluster installer (" + variables.installerAccount + ") the kubeConfig of its own cluster" : "") +
  "; " + request.userInfo.username +
  " is neither; a release that reaches another cluster belongs in the fleet repository"`

	// G2b: what the installer makes reaches its own cluster. Its chart
	// makes only the cluster's addon releases, each with a kubeConfig; one
	// without would be installed on the management cluster by the
	// platform's helm-controller as itself (cluster-admin on Cozystack).
	celG2Installer = `!(variables.fromInstaller && variables.specChanged) ||
variables.namesCredential`
	msgG2Installer = `request.kind.kind + " " +
  ` + celTarget + ` +
  ": " + request.userInfo.username +
  " installs the tenant's ComputePlane, and what it makes must reach that cluster: spec.kubeConfig.secretRef must name one of its credentials (" +
  variables.kubeconfigSecret + "); without a kubeConfig the release would run on the management cluster as the platform's helm-controller"`

	// G3a: a ComputePlane's worker VMs are the platform's; a cluster
	// administrator may still delete one or remove its finalizers.
	celG3Owner = `!variables.isWorker || variables.fromPlatform || variables.breakGlass`
	msgG3Owner = `"VirtualMachine " +
  ` + celTarget + ` +
  " is a worker of the tenant's ComputePlane (` + ClusterNameLabel + ` " +
  variables.clusterRelease +
  "): only the platform's controllers may create, change or delete it (a cluster administrator, group system:masters, may delete it or remove its finalizers), and " +
  request.userInfo.username +
  " is not one of them; change the ComputePlane (its node groups) in the fleet repository"`

	// G3b: and keep their cluster name, whoever asks.
	celG3Label = `!variables.isWorker || request.operation != 'UPDATE' ||
variables.oldVMCluster == variables.newVMCluster`
	msgG3Label = `"VirtualMachine " +
  ` + celTarget + ` +
  ": the label ` + ClusterNameLabel + ` of a ComputePlane worker cannot be added, changed or removed (it was '" +
  variables.oldVMCluster + "', the update makes it '" + variables.newVMCluster +
  "'); the egress policy of the ComputePlane selects its VMs by it"`

	// G3c: nobody but the platform makes a VM of a worker's labels or
	// disks, or copies a worker's disk (the break-glass changes no spec).
	celG3Disks = `!(variables.claimsWorker || variables.copiesDisk || variables.unreadPatches) ||
variables.fromPlatform || variables.breakGlass`
	msgG3Disks = `request.kind.kind + " " +
  ` + celTarget + ` +
  (variables.claimsWorker ? " is made like a worker of the tenant's ComputePlane (its template carries the labels of cluster " +
    variables.clusterRelease + ", or it mounts or clones one of its disks)" :
  variables.copiesDisk ? " copies, restores or clones a worker or a disk of the tenant's ComputePlane (a name " + variables.clusterRelease +
    "-..., or a patch naming the cluster's objects or labels)" :
    " carries a JSON patch the guard cannot read as KubeVirt applies it (a \\u escape, or a copy or move op, which takes its value from another field of the VM); write each patch in plain characters with add, replace, remove or test") +
  ": a worker's disks hold its machine configuration and kubelet credentials, so only the platform's controllers may use them, and " +
  request.userInfo.username + " is not one of them"`

	// G3d: nobody but the platform gives a VM's guest the cluster's
	// credentials or the token of an account that reaches them.
	celG3Credentials = `!variables.vmCarriesCredential ||
variables.fromPlatform || variables.breakGlass`
	msgG3Credentials = `request.kind.kind + " " +
  ` + celTarget + ` +
  " would hand its guest a credential of the tenant's ComputePlane: a Secret of the cluster (" +
  variables.kubeconfigSecret + ", " + variables.clusterRelease + "-ca, " + variables.clusterRelease +
  "-talosconfig and every other Secret Kamaji, Cluster API and the chart write for it) in a volume, cloud-init, sysprep or accessCredentials, or through a serviceAccount volume the token of " +
  ([variables.installerAccount] + variables.chartAccounts).join(", ") +
  " or the fleet's account; only the platform's controllers may, and " + request.userInfo.username + " is not one of them"`

	// G5: the fleet's sources are written only by the fleet, Flux's source
	// controllers and cluster administrators.
	celG5Sources = `!variables.isFleetSource || variables.fromFlux || variables.fromSource || variables.fromAdmin`
	msgG5Sources = `request.kind.kind + " " +
  ` + celTarget + ` +
  (request.?subResource.orValue('') != '' ? " (" + request.subResource + ")" : "") +
  " is a source the fleet's account applies from (spec.fleet.sourceRef, the wiring's generators and artifacts, the cluster chart's): only the fleet (" +
  variables.fluxIdentities.join(", ") + "), Flux's source controllers (" + variables.sourceIdentities.join(", ") +
  ") and cluster administrators may create or change it or its status, and " + request.userInfo.username + " is none of them"`

	// G4a: only the fleet makes a release or Kustomization run as the
	// fleet's account or a cluster installer.
	celG4Account = `!variables.usesAccount || variables.fromFlux || variables.fromAdmin`
	msgG4Account = `request.kind.kind + " " +
  ` + celTarget + ` +
  ": spec.serviceAccountName " + object.spec.serviceAccountName +
  " is the account of the fleet or of a ComputePlane's installer, which may reach the ComputePlane; only the fleet (" +
  variables.fluxIdentities.join(", ") + ") may run anything as it, and " + request.userInfo.username + " is not the fleet"`

	// G4b: nobody but the platform runs a pod as, or takes a token of, the
	// fleet's account or an installer.
	celG4Credentials = `!variables.carriesAccount || variables.fromPlatform`
	msgG4Credentials = `request.kind.kind + " for service account " + request.namespace + "/" + variables.accountOf +
  ": that account is the fleet's or a ComputePlane's installer, which may reach the ComputePlane; no pod runs as it and no token of it is issued, and " +
  request.userInfo.username + " is not one of the platform's controllers"`

	// G4c: only the fleet binds those accounts and their roles.
	celG4Binding = `!variables.bindsAccount || variables.fromFlux || variables.fromAdmin`
	msgG4Binding = `request.kind.kind + " " +
  ` + celTarget + ` +
  " binds the fleet's or a ComputePlane installer's account or role, whose rights only the fleet (" +
  variables.fluxIdentities.join(", ") + ") grants; " + request.userInfo.username + " is not the fleet"`
)

// G6 (SplitPools line only): a worker pool of a ComputePlane's cluster
// is made or changed only by the fleet (under delivery: Platform, also by
// the platform's helm-controller, which installs the module's pools) and
// cluster administrators. A tenant's KubernetesNodes app, which
// cozystack-api makes a HelmRelease kubernetes-nodes-<app>, is refused
// when it would be one. An update that leaves the spec as it was (a
// reconcile request, `flux reconcile`; a suspend) changes no worker and is
// admitted, as G2 admits it; a release being deleted may still lose its
// finalizers.
const (
	celG6Pool = `!variables.claimsPool || !variables.specChanged ||
variables.fromFlux || variables.fromAdmin ||
(!variables.directDelivery && variables.fromHelm) ||
has(object.metadata.deletionTimestamp)`
	msgG6Pool = `"HelmRelease " +
  ` + celTarget + ` +
  " is a worker pool of the tenant's ComputePlane (named kubernetes-nodes-" + variables.clusterRelease +
  "-<pool>, or spec.values.cluster or clusterReleaseName " + variables.clusterRelease +
  "): a pool adds workers, with the OS image and kubelet settings it chooses, to a cluster the tenant must not administer, so only the fleet (" +
  variables.fluxIdentities.join(", ") + ") and cluster administrators make one or change its spec, and " + request.userInfo.username +
  " is neither; set the ComputePlane's node groups in the fleet repository"`
)

// The guard's match condition: a request goes to the rules unless it is
// one that no rule can refuse. Every matched request would otherwise have
// every rule planned and evaluated: kube-apiserver builds a rule's CEL
// program anew for each evaluation (it tracks each request's cost), so
// what a request costs grows with the size of every rule, and the fleet's
// own dry-run applies at each reconcile are most of the guard's requests
// (docs/guard.md, "What a request costs"). Skipped, before any rule:
//
//   - what the fleet applies (guard.fluxIdentities) to the kinds of G2,
//     G2b, G4a and G4c: HelmReleases, Kustomizations, RoleBindings and
//     ClusterRoleBindings; those rules admit the fleet, and G2b only ever
//     refuses a cluster installer, whose account name the fleet's never
//     ends in;
//   - an UPDATE of a HelmRelease or Kustomization that leaves its spec as it
//     was (a reconcile request, a label, a finalizer): G2, G2b and G4a
//     judge only a spec that changes;
//   - what the fleet or Flux's source controllers (guard.sourceIdentities)
//     write to Flux's sources and their status: G5, the only rule of
//     those kinds, admits them;
//   - but never a HelmRelease that G1 could refuse: one whose kind label,
//     before or after, names a kind placed on the ComputePlane (in any
//     case), or whose chartRef names one of those kinds' charts (by name
//     alone: this may send more to the rules, never fewer).
//
// The unit tests evaluate every case with and without the condition, and
// fail when the condition skips a request a rule refuses.
const celMayBeRefused = `!(
  (request.userInfo.username in %[1]s &&
    !request.userInfo.username.endsWith(':' + %[2]s) &&
    request.resource.group in ['helm.toolkit.fluxcd.io', 'kustomize.toolkit.fluxcd.io', 'rbac.authorization.k8s.io']) ||
  (request.operation == 'UPDATE' &&
    request.resource.group in ['helm.toolkit.fluxcd.io', 'kustomize.toolkit.fluxcd.io'] &&
    object.?spec.orValue({}) == oldObject.?spec.orValue({})) ||
  (request.resource.group in ['source.toolkit.fluxcd.io', 'source.extensions.fluxcd.io'] &&
    request.userInfo.username in %[5]s)) ||
(request.resource.group == 'helm.toolkit.fluxcd.io' &&
  [object, oldObject].exists(o, o != null &&
    (['` + wire.ApplicationKindLabel + `', '` + wire.RoutedKindLabel + `'].exists(l,
      o.metadata.?labels[?l].orValue('').lowerAscii() in %[3]s) ||
      o.?spec.?chartRef.?name.orValue('') in %[4]s)))`

// guardMatchConditions is the guard's one match condition (celMayBeRefused)
// with the fleet's values written in: no match condition reads the
// policy's variables, so the condition is the same on every platform.
func guardMatchConditions(v guardValues) ([]admissionv1.MatchCondition, error) {
	kinds := make([]string, 0, len(v.ComputePlaneKinds))
	for _, k := range v.ComputePlaneKinds {
		kinds = append(kinds, strings.ToLower(k))
	}
	charts := make([]string, 0, len(v.ComputePlaneCharts))
	for _, c := range v.ComputePlaneCharts {
		charts = append(charts, c.Name)
	}
	var args []any
	sourceWriters := sortedUnique(append(slices.Clone(v.FluxIdentities), v.SourceIdentities...))
	for _, value := range []any{sortedUnique(v.FluxIdentities), model.InstallerAccount, sortedUnique(kinds), sortedUnique(charts), sourceWriters} {
		lit, err := celLiteral(value)
		if err != nil {
			return nil, err
		}
		args = append(args, lit)
	}
	return []admissionv1.MatchCondition{{Name: wire.GuardMatchCondition, Expression: fmt.Sprintf(celMayBeRefused, args...)}}, nil
}

// FleetSourcePrefix starts the name of every source of Flux's source
// groups the fleet renders in its wiring namespace (the wiring's
// generators and their artifacts, the baseline chart's source): G5 keeps
// every such name the fleet's, whatever the layout makes of them.
const FleetSourcePrefix = "computeplane-"

// sourceResources are the resources of the kinds spec.fleet.sourceRef
// may name.
var sourceResources = map[string]string{
	"GitRepository": "gitrepositories",
	"OCIRepository": "ocirepositories",
	"Bucket":        "buckets",
}

// fleetSources are the sources G5 names one by one: spec.fleet.sourceRef,
// the baseline chart's OCIRepository (spec.baseline.namespace), and the
// cluster chart's generator and artifact in the platform's namespace,
// sorted.
func fleetSources(c *api.Config) []map[string]string {
	out := []map[string]string{
		{"resource": "artifactgenerators", "namespace": PlatformNamespace, "name": SourceGeneratorName},
		{"resource": "externalartifacts", "namespace": PlatformNamespace, "name": ClusterArtifactName},
	}
	if c.Baseline.Namespace != "" {
		out = append(out, map[string]string{"resource": "ocirepositories", "namespace": c.Baseline.Namespace, "name": wire.BaselineRelease})
	}
	if c.Fleet != nil && c.Fleet.SourceRef.Name != "" {
		ref := c.Fleet.SourceRef
		out = append(out, map[string]string{"resource": sourceResources[ref.Kind], "namespace": ref.Namespace, "name": ref.Name})
	}
	slices.SortFunc(out, func(a, b map[string]string) int {
		return cmp.Or(cmp.Compare(a["resource"], b["resource"]), cmp.Compare(a["namespace"], b["namespace"]), cmp.Compare(a["name"], b["name"]))
	})
	return out
}

// guardValues are the fleet's values the guard's variables carry.
type guardValues struct {
	FluxIdentities     []string
	HelmIdentities     []string
	PlatformIdentities []string
	ComputePlaneKinds  []string
	ComputePlaneCharts []api.ChartRef
	ClusterRelease     string
	DirectDelivery     bool
	FleetNamespace     string
	FleetAccount       string
	SourceIdentities   []string
	// FleetSources are the fleet's own sources G5 names one by one (the
	// others are the wiring namespace's computeplane-...): resource,
	// namespace, name.
	FleetSources []map[string]string
	// Pools: the SplitPools line, where G6 guards the worker pools.
	Pools bool
	// PoolAccounts are the accounts the pools' chart creates for every
	// pool of the fleet (SplitPools, delivery: Direct): G3d counts them
	// with the cluster chart's.
	PoolAccounts []string
}

// celLiteral writes v as a CEL literal in JSON syntax (a list of strings or
// a string), which CEL reads as written.
func celLiteral(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("failed to encode a guard variable: %w", err)
	}
	return string(data), nil
}

// sortedUnique returns the strings sorted, without duplicates, never nil
// (an empty list is [] in CEL, not null).
func sortedUnique(in []string) []string {
	out := append([]string{}, in...)
	slices.Sort(out)
	return slices.Compact(out)
}

// chartLiterals are the ComputePlane charts as CEL maps, sorted and unique.
func chartLiterals(refs []api.ChartRef) []map[string]string {
	out := make([]map[string]string, 0, len(refs))
	seen := map[api.ChartRef]bool{}
	slices.SortFunc(refs, func(a, b api.ChartRef) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, r := range refs {
		if r.Name == "" || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, map[string]string{"kind": r.Kind, "name": r.Name, "namespace": r.Namespace})
	}
	return out
}

func guardVariables(v guardValues) ([]admissionv1.Variable, error) {
	literals := []struct {
		name  string
		value any
	}{
		{wire.GuardFluxIdentitiesVariable, sortedUnique(v.FluxIdentities)},
		{wire.GuardHelmIdentitiesVariable, sortedUnique(v.HelmIdentities)},
		{wire.GuardPlatformIdentitiesVariable, sortedUnique(v.PlatformIdentities)},
		{"computePlaneKinds", sortedUnique(v.ComputePlaneKinds)},
		{"computePlaneCharts", chartLiterals(v.ComputePlaneCharts)},
		{"clusterRelease", v.ClusterRelease},
		{"kubeconfigSecret", model.KubeconfigSecret(v.ClusterRelease)},
		{"kubeconfigKey", model.KubeconfigKey},
		{"credentials", sortedUnique(model.ClusterCredentials(v.ClusterRelease))},
		{"machineCredentialSuffixes", sortedUnique(model.MachineCredentialSuffixes)},
		{"chartAccounts", sortedUnique(append(model.ChartServiceAccounts(v.ClusterRelease), v.PoolAccounts...))},
		{"directDelivery", v.DirectDelivery},
		{"installerAccount", model.InstallerAccount},
		{"fleetNamespace", v.FleetNamespace},
		{"fleetAccount", v.FleetAccount},
		{"accountRoles", []string{FleetAccountRole, InstallerRole}},
		{"sourceIdentities", sortedUnique(v.SourceIdentities)},
		{"fleetSources", v.FleetSources},
	}
	vars := make([]admissionv1.Variable, 0, len(literals)+32)
	for _, l := range literals {
		expr, err := celLiteral(l.value)
		if err != nil {
			return nil, err
		}
		vars = append(vars, admissionv1.Variable{Name: l.name, Expression: expr})
	}
	// Later variables read earlier ones.
	for _, d := range [][2]string{
		{"isHelmRelease", celIsHelmRelease},
		{"isFluxObject", celIsFluxObject},
		{"isVirtualMachine", celIsVirtualMachine},
		{"isPod", celIsPod},
		{"isTokenRequest", celIsTokenRequest},
		{"isSecret", celIsSecret},
		{"isBinding", celIsBinding},
		{"isVMI", celIsVMI},
		{"isVMIReplicaSet", celIsVMIReplicaSet},
		{"isVMPool", celIsVMPool},
		{"isSnapshotContent", celIsSnapshotContent},
		{"isDiskCopy", celIsDiskCopy},
		{"fromFlux", celFromFlux},
		{"fromHelm", celFromHelm},
		{"fromPlatform", celFromPlatform},
		{"fromInstaller", celFromInstaller},
		{"fromAdmin", celFromAdmin},
		{"fromSource", celFromSource},
		{"routedKinds", celRoutedKinds},
		{"routedChart", celRoutedChart},
		{"newKubeConfig", celNewKubeConfig},
		{"oldKubeConfig", celOldKubeConfig},
		{"specChanged", celSpecChanged},
		{"setsKubeConfig", celSetsKubeConfig},
		{"namesCredential", celNamesCredential},
		{"oldNamesCredential", celOldNamesCredential},
		{"readsCredentials", celReadsCredentials},
		{"usesAccount", celUsesAccount},
		{"accountOf", celAccountOf},
		{"carriesAccount", celCarriesAccount},
		{"bindsAccount", celBindsAccount},
		{"oldVMCluster", celOldVMCluster},
		{"newVMCluster", celNewVMCluster},
		{"isWorker", celIsWorker},
		{"vmTemplates", celVMTemplates},
		{"vmSpecs", celVMSpecs},
		{"vmiTemplates", celVMITemplates},
		{"vmiSpecs", celVMISpecs},
		{"claimsWorker", celClaimsWorker},
		{"vmCarriesCredential", celVMCarriesCredential},
		{"copiesDisk", celCopiesDisk},
		{"unreadPatches", celUnreadPatches},
		{"breakGlass", celBreakGlass},
		{"isFleetSource", celIsFleetSource},
	} {
		vars = append(vars, admissionv1.Variable{Name: d[0], Expression: d[1]})
	}
	if v.Pools {
		vars = append(vars, admissionv1.Variable{Name: "claimsPool", Expression: celClaimsPool})
	}
	return vars, nil
}

// variableRef is a reference to a variable in an expression. No string
// literal of the guard holds the text "variables." (a test proves the
// inlined expressions compile without variables declared).
var variableRef = regexp.MustCompile(`\bvariables\.([A-Za-z_][A-Za-z0-9_]*)`)

// inlineVariables writes every variable's expression, in parentheses, in
// place of each reference to it, in the later variables and then in the
// validations' expressions and message expressions: the same rules with
// no variables. Where a variable is read several times its expression is
// evaluated as often (the variables' lazy evaluation did it once), which
// the guard's cost allows: its expressions read a request's own object,
// bounded by the API server's request size (guard_eval_test.go measures
// the cost of the largest).
func inlineVariables(vars []admissionv1.Variable, validations []admissionv1.Validation) ([]admissionv1.Validation, error) {
	inlined := make(map[string]string, len(vars))
	var missing []string
	expand := func(expr string) string {
		return variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
			name := strings.TrimPrefix(ref, "variables.")
			e, ok := inlined[name]
			if !ok {
				missing = append(missing, name)
				return ref
			}
			return e
		})
	}
	for _, v := range vars {
		inlined[v.Name] = "(" + expand(v.Expression) + ")"
	}
	out := make([]admissionv1.Validation, len(validations))
	for i, v := range validations {
		v.Expression = expand(v.Expression)
		v.MessageExpression = expand(v.MessageExpression)
		out[i] = v
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("failed to inline the guard's variables: %s read before it is defined", strings.Join(slices.Compact(slices.Sorted(slices.Values(missing))), ", "))
	}
	return out, nil
}

// guardIdentities is the annotation of the policy that names its
// identities for the pull-request summary, as JSON: the three lists by
// the names of their variables, sorted and without duplicates, the same
// lists the rules compare request.userInfo.username with.
func guardIdentities(g api.GuardConfig) (string, error) {
	data, err := json.Marshal(map[string][]string{
		wire.GuardFluxIdentitiesVariable:     sortedUnique(g.FluxIdentities),
		wire.GuardHelmIdentitiesVariable:     sortedUnique(g.HelmIdentities),
		wire.GuardPlatformIdentitiesVariable: sortedUnique(g.PlatformIdentities),
	})
	if err != nil {
		return "", fmt.Errorf("failed to encode the guard's identities: %w", err)
	}
	return string(data), nil
}

// GuardRoute is one entry of the guard's wire.GuardRoutesAnnotation: a
// definition placed on the ComputePlane, whose kind and chart G1 routes.
type GuardRoute struct {
	Kind       string     `json:"kind"`
	Definition string     `json:"definition"`
	ChartRef   GuardChart `json:"chartRef"`
}

// GuardChart is a routed definition's spec.release.chartRef.
type GuardChart struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// guardRoutes is the annotation of the policy that names, for the
// pull-request summary, the definitions whose kinds and charts G1 routes,
// as JSON sorted by kind.
func guardRoutes(defs []*api.Definition) (string, error) {
	routes := make([]GuardRoute, 0, len(defs))
	for _, d := range defs {
		routes = append(routes, GuardRoute{Kind: d.Kind, Definition: d.Ref.Name,
			ChartRef: GuardChart{Kind: d.ChartRef.Kind, Name: d.ChartRef.Name, Namespace: d.ChartRef.Namespace}})
	}
	slices.SortFunc(routes, func(a, b GuardRoute) int { return cmp.Compare(a.Kind, b.Kind) })
	data, err := json.Marshal(routes)
	if err != nil {
		return "", fmt.Errorf("failed to encode the guard's routes: %w", err)
	}
	return string(data), nil
}

// guardValidations are the rules G1 to G5 (docs/guard.md), and on the
// SplitPools line (pools) G6.
func guardValidations(pools bool) []admissionv1.Validation {
	forbidden := metav1.StatusReasonForbidden
	out := []admissionv1.Validation{
		{Expression: celG1, MessageExpression: msgG1, Reason: &forbidden,
			Message: "this kind runs on the ComputePlane: add it to the fleet repo"},
		{Expression: celG2, MessageExpression: msgG2, Reason: &forbidden,
			Message: "only Flux may set or change spec.kubeConfig"},
		{Expression: celG2Installer, MessageExpression: msgG2Installer, Reason: &forbidden,
			Message: "what a cluster installer makes must reach its own cluster through spec.kubeConfig"},
		{Expression: celG3Owner, MessageExpression: msgG3Owner, Reason: &forbidden,
			Message: "only the platform may change a ComputePlane's worker VMs"},
		{Expression: celG3Label, MessageExpression: msgG3Label, Reason: &forbidden,
			Message: "the cluster name of a ComputePlane worker cannot change"},
		{Expression: celG3Disks, MessageExpression: msgG3Disks, Reason: &forbidden,
			Message: "only the platform may use a ComputePlane worker's labels or disks"},
		{Expression: celG3Credentials, MessageExpression: msgG3Credentials, Reason: &forbidden,
			Message: "only the platform may give a VM a ComputePlane's credentials or accounts"},
		{Expression: celG4Account, MessageExpression: msgG4Account, Reason: &forbidden,
			Message: "only the fleet may run as the fleet's or an installer's account"},
		{Expression: celG4Credentials, MessageExpression: msgG4Credentials, Reason: &forbidden,
			Message: "no pod or token of the fleet's or an installer's account"},
		{Expression: celG4Binding, MessageExpression: msgG4Binding, Reason: &forbidden,
			Message: "only the fleet binds the fleet's or an installer's account"},
		{Expression: celG5Sources, MessageExpression: msgG5Sources, Reason: &forbidden,
			Message: "only the fleet and Flux's source controllers write the fleet's sources"},
	}
	if pools {
		out = append(out, admissionv1.Validation{Expression: celG6Pool, MessageExpression: msgG6Pool, Reason: &forbidden,
			Message: "only the fleet makes a worker pool of a ComputePlane's cluster"})
	}
	return out
}

// guardRules are what the policy matches: every version of each kind
// (matchPolicy Equivalent then also matches a request through another
// version), main resources only.
func guardRules() []admissionv1.NamedRuleWithOperations {
	rule := func(group, resource string, ops ...admissionv1.OperationType) admissionv1.NamedRuleWithOperations {
		return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
		}}
	}
	create, update := admissionv1.Create, admissionv1.Update
	return []admissionv1.NamedRuleWithOperations{
		rule("helm.toolkit.fluxcd.io", "helmreleases", create, update),
		rule("kustomize.toolkit.fluxcd.io", "kustomizations", create, update),
		rule("kubevirt.io", "virtualmachines", create, update, admissionv1.Delete),
		// A VMI's spec is fixed at creation (KubeVirt's webhook refuses
		// other changes, and virt-handler, no platform identity, writes its
		// status through the main resource): CREATE only.
		rule("kubevirt.io", "virtualmachineinstances", create),
		rule("kubevirt.io", "virtualmachineinstancereplicasets", create, update),
		rule("pool.kubevirt.io", "virtualmachinepools", create, update),
		rule("", "pods", create),
		rule("", "serviceaccounts/token", create),
		rule("", "secrets", create),
		rule("", "persistentvolumeclaims", create),
		rule("rbac.authorization.k8s.io", "rolebindings", create, update),
		rule("rbac.authorization.k8s.io", "clusterrolebindings", create, update),
		rule("cdi.kubevirt.io", "datavolumes", create),
		// A DataSource names a disk that DataVolumes (spec.sourceRef) and
		// dataVolumeTemplates then clone; its source may change.
		rule("cdi.kubevirt.io", "datasources", create, update),
		rule("snapshot.storage.k8s.io", "volumesnapshots", create),
		// KubeVirt's webhooks refuse changes of these specs: CREATE only.
		rule("snapshot.kubevirt.io", "virtualmachinesnapshots", create),
		rule("snapshot.kubevirt.io", "virtualmachinesnapshotcontents", create),
		rule("snapshot.kubevirt.io", "virtualmachinerestores", create),
		rule("clone.kubevirt.io", "virtualmachineclones", create),
		rule("export.kubevirt.io", "virtualmachineexports", create),
		rule("backup.kubevirt.io", "virtualmachinebackups", create),
		rule("backup.kubevirt.io", "virtualmachinebackuptrackers", create),
		// G5: the fleet's sources and their status (an artifact's URL and
		// digest are what kustomize-controller fetches and checks).
		rule("source.toolkit.fluxcd.io", "gitrepositories", create, update),
		rule("source.toolkit.fluxcd.io", "gitrepositories/status", update),
		rule("source.toolkit.fluxcd.io", "ocirepositories", create, update),
		rule("source.toolkit.fluxcd.io", "ocirepositories/status", update),
		rule("source.toolkit.fluxcd.io", "buckets", create, update),
		rule("source.toolkit.fluxcd.io", "buckets/status", update),
		rule("source.toolkit.fluxcd.io", "externalartifacts", create, update),
		rule("source.toolkit.fluxcd.io", "externalartifacts/status", update),
		rule("source.extensions.fluxcd.io", "artifactgenerators", create, update),
		rule("source.extensions.fluxcd.io", "artifactgenerators/status", update),
	}
}

// RenderGuard builds the management-plane guard (docs/guard.md): the
// ValidatingAdmissionPolicy computeplane-guard and its binding, cluster-scoped
// platform objects, from the fleet's guard config, the kinds its
// definitions place on the ComputePlane and the cluster's release name.
//
// Rules (each a validation with a messageExpression):
//
//   - G1: a HelmRelease labelled apps.cozystack.io/application.kind or
//     computeplane.dev/application.kind (before or after the update) with a
//     kind placed on the ComputePlane must set spec.kubeConfig.secretRef to
//     {name: <release>-admin-kubeconfig, key: super-admin.svc}, whoever
//     asks; a release being deleted is exempt.
//   - G2: a HelmRelease or Kustomization that is created with a
//     spec.kubeConfig, or whose kubeConfig is added, changed or removed, or
//     whose spec (but spec.suspend) changes while it has one, comes from
//     guard.fluxIdentities; or from guard.platformIdentities, which may name
//     the ComputePlane's Secret only in an object helm-controller applied
//     from the ComputePlane's own release (its origin labels), as the
//     cluster chart's addon releases are.
//   - G2b: a HelmRelease or Kustomization the namespace's installer makes
//     or changes sets a kubeConfig naming its own cluster's credential.
//   - G3: a kubevirt.io VirtualMachine whose cluster.x-k8s.io/cluster-name is
//     the cluster's release, before or after the request, is created,
//     changed and deleted only by guard.platformIdentities (a tenant cannot
//     forge a worker either; a cluster administrator may delete it or only
//     remove its finalizers, the break-glass), and no update adds, changes
//     or removes that label. No one else makes a VM, VMI, VMI replica set,
//     VM pool or snapshot content whose VMI spec hands the guest the
//     cluster's credential Secrets or a serviceAccount volume of the
//     installer, the fleet or the chart's accounts, or names a worker's
//     disk, or whose template carries the cluster's labels; nor a clone,
//     restore, snapshot, export, backup or copy of, or onto, a worker or
//     its disks (docs/guard.md lists every KubeVirt field read); nor a
//     clone's or restore's JSON patch with a \u escape or a copy or move op,
//     which the guard cannot read as KubeVirt applies it.
//   - G4: the fleet's and the installers' accounts are the fleet's (runs,
//     pods, tokens, bindings).
//   - G5: the fleet's sources (spec.fleet.sourceRef, the wiring's
//     computeplane-... generators and artifacts in the wiring namespace,
//     the baseline chart's OCIRepository, the cluster chart's generator and
//     artifact), and their status, are written only by the fleet,
//     guard.sourceIdentities and cluster administrators.
//   - G6 (spec.platform.clusterChart: SplitPools only): a HelmRelease named
//     kubernetes-nodes-<cluster release>-..., or whose spec.values.cluster
//     or clusterReleaseName is the cluster's release, before or after the
//     request, comes only from guard.fluxIdentities (and under delivery:
//     Platform guard.helmIdentities): a tenant's KubernetesNodes pool of
//     the ComputePlane's cluster is refused.
//
// Cases for a real API server (the end-to-end suite), with the defaults:
//
//   - G1 denied: HelmRelease tenant-acme/jupyterhub-notebooks labelled
//     apps.cozystack.io/application.kind: JupyterHub without kubeConfig,
//     created as system:serviceaccount:cozy-system:cozystack-api, as a
//     tenant user (alice, groups tenant-acme-admins) and as Flux;
//     admitted: the rendered routed release, applied as Flux.
//   - G2 denied: a HelmRelease or Kustomization with
//     spec.kubeConfig.secretRef computeplane-admin-kubeconfig created by a
//     tenant user, by cozystack-api, or by
//     system:serviceaccount:cozy-fluxcd:flux without helm-controller's
//     origin labels of release computeplane; a rendered routed release
//     whose chartRef or values a tenant user changes; admitted: the
//     rendered releases applied as
//     system:serviceaccount:flux-system:kustomize-controller, an addon
//     release computeplane-cilium labelled helm.toolkit.fluxcd.io/name:
//     computeplane and .../namespace: tenant-acme created as
//     system:serviceaccount:cozy-fluxcd:flux, a label-only patch (Flux's
//     sharding) and a suspend by anyone allowed to update releases.
//   - G3 denied: a tenant user updating, relabelling (dropping the label or
//     adding policy.cozystack.io/allow-to-apiserver), deleting or creating
//     a VM labelled cluster.x-k8s.io/cluster-name: computeplane in
//     tenant-acme; capk-manager removing that label; admitted: the same as
//     system:serviceaccount:cozy-cluster-api:capk-manager (create, update
//     keeping the label, delete), and any change to a VM of another
//     cluster.
func RenderGuard(f *model.Fleet) ([]Object, error) {
	g := f.Config.Guard
	var kinds []string
	var charts []api.ChartRef
	var routed []*api.Definition
	for kind, d := range f.Definitions {
		if d.Placement == api.PlacementComputePlane {
			kinds = append(kinds, kind)
			charts = append(charts, d.ChartRef)
			routed = append(routed, d)
		}
	}
	fleetNamespace, fleetAccount := f.Config.FleetAccount()
	values := guardValues{
		FluxIdentities:     g.FluxIdentities,
		HelmIdentities:     g.HelmIdentities,
		PlatformIdentities: g.PlatformIdentities,
		ComputePlaneKinds:  kinds,
		ComputePlaneCharts: charts,
		ClusterRelease:     f.ClusterRelease(),
		DirectDelivery:     f.Config.Delivery == api.Direct,
		FleetNamespace:     fleetNamespace,
		FleetAccount:       fleetAccount,
		SourceIdentities:   g.SourceIdentities,
		FleetSources:       fleetSources(f.Config),
		Pools:              f.Config.Platform.ClusterChart.Split(),
		PoolAccounts:       poolAccounts(f),
	}
	vars, err := guardVariables(values)
	if err != nil {
		return nil, err
	}
	matchConditions, err := guardMatchConditions(values)
	if err != nil {
		return nil, err
	}
	validations := guardValidations(values.Pools)
	if !f.Config.Platform.Serves(api.FeatureIsolatedPolicyVariables) {
		if validations, err = inlineVariables(vars, validations); err != nil {
			return nil, err
		}
		vars = nil
	}
	identities, err := guardIdentities(g)
	if err != nil {
		return nil, err
	}
	routes, err := guardRoutes(routed)
	if err != nil {
		return nil, err
	}
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	policy := admissionv1.ValidatingAdmissionPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: wire.GuardName, Labels: managedLabels(nil),
			Annotations: map[string]string{wire.GuardIdentitiesAnnotation: identities, wire.GuardRoutesAnnotation: routes}},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				MatchPolicy:   &equivalent,
				ResourceRules: guardRules(),
			},
			MatchConditions: matchConditions,
			Variables:       vars,
			Validations:     validations,
		},
	}
	binding := admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: wire.GuardName, Labels: managedLabels(nil)},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        wire.GuardName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	objs, err := platformObjects(f, &policy, &binding)
	if err != nil {
		return nil, err
	}
	// The guard lives with the fleet's account: in the fleet folder, in the
	// account's unit, whose name and folder no layout changes and which
	// every other unit waits for, so no layout change ever prunes it
	// (docs/flux-wiring.md, "Where the guard lives").
	for i := range objs {
		objs[i].Account = true
	}
	return objs, nil
}

// poolAccounts are the service accounts apps/kubernetes-nodes (cozystack#3315)
// creates for each pool release of the fleet, <release>-talos-reconcile
// (which reads the cluster's Secrets to configure its workers) and
// <release>-unpin: none but on the SplitPools line under delivery: Direct.
func poolAccounts(f *model.Fleet) []string {
	if f.Cluster == nil || !f.Cluster.Split() {
		return nil
	}
	var out []string
	for _, t := range f.SortedTenants() {
		if !t.ComputePlane {
			continue
		}
		for _, p := range f.Cluster.Pools(t.Knobs) {
			out = append(out, p.Release+"-talos-reconcile", p.Release+"-unpin")
		}
	}
	return out
}
