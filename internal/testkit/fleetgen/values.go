package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Node builders: keys keep the order they are given, as people write them.

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func num(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// node turns a Go value into a node: *yaml.Node as is, string, int, bool,
// []any and []string.
func node(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case string:
		return str(v)
	case int:
		return num(v)
	case bool:
		return boolean(v)
	case []string:
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, x := range v {
			s.Content = append(s.Content, str(x))
		}
		return s
	case []any:
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, x := range v {
			s.Content = append(s.Content, node(x))
		}
		return s
	}
	panic(fmt.Sprintf("fleetgen: cannot build a node from %T", v))
}

// m builds a mapping from key, value pairs; a nil value leaves the key out.
func m(pairs ...any) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == nil {
			continue
		}
		if n, ok := pairs[i+1].(*yaml.Node); ok && n == nil {
			continue
		}
		out.Content = append(out.Content, str(pairs[i].(string)), node(pairs[i+1]))
	}
	return out
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

var (
	presets       = []string{"nano", "micro", "small", "medium", "large", "xlarge", "2xlarge"}
	instanceTypes = []string{"u1.medium", "u1.large", "u1.xlarge", "u1.2xlarge", "c1.large", "m1.large", "s1.xlarge"}
	storageClass  = []string{"replicated", "local", "fast-ssd", "standard"}
	cpus          = []string{"100m", "250m", "500m", "1", "2", "4"}
	memories      = []string{"128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi"}
	sizes         = []string{"1Gi", "5Gi", "10Gi", "20Gi", "50Gi", "100Gi", "250Gi"}
	schedules     = []string{"0 2 * * *", "30 1 * * 0", "0 */6 * * *", "15 3 * * 1-5"}
	people        = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar"}
	extensions    = []string{"pg_stat_statements", "pgcrypto", "uuid-ossp", "hstore", "postgis", "pg_trgm", "citext", "vector"}
	images        = []string{"quay.io/jupyter/scipy-notebook", "quay.io/jupyter/pytorch-notebook", "ghcr.io/comfyanonymous/comfyui", "docker.n8n.io/n8nio/n8n", "apache/airflow", "codercom/code-server", "jenkins/jenkins"}
)

func resources(r *rand.Rand) *yaml.Node {
	return m("cpu", pick(r, cpus), "memory", pick(r, memories))
}

// secret is a password-looking string, different for every call.
func secret(r *rand.Rand) string {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 24)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func tolerations(r *rand.Rand) []any {
	var out []any
	for i := range 1 + r.IntN(3) {
		out = append(out, m(
			"key", fmt.Sprintf("node.cozystack.io/pool-%d", i),
			"operator", "Equal",
			"value", pick(r, []string{"dedicated", "gpu", "storage"}),
			"effect", pick(r, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}),
		))
	}
	return out
}

func env(r *rand.Rand, n int) []any {
	var out []any
	for i := range n {
		out = append(out, m("name", fmt.Sprintf("APP_SETTING_%d", i), "value", fmt.Sprintf("%s-%d", pick(r, appWords), r.IntN(1000))))
	}
	return out
}

func backup(r *rand.Rand, name string) *yaml.Node {
	return m(
		"enabled", r.IntN(3) > 0,
		"schedule", pick(r, schedules),
		"retentionPolicy", fmt.Sprintf("%dd", 7+r.IntN(60)),
		"destinationPath", fmt.Sprintf("s3://backups-%s/%s/", pick(r, tenantWords), name),
		"endpointURL", "http://minio-gateway-service:9000",
		"s3AccessKey", secret(r)[:16],
		"s3SecretKey", secret(r),
	)
}

// values returns the Helm values of one app: a few KB, nested the way
// Cozystack app specs are.
func values(r *rand.Rand, k *kindSpec, name string) *yaml.Node {
	base := []any{
		"replicas", 1 + r.IntN(3),
		"resourcesPreset", pick(r, presets),
	}
	if r.IntN(2) == 0 {
		base = append(base, "resources", resources(r))
	}
	switch k.Profile {
	case profileDatabase:
		users := m()
		for range 1 + r.IntN(4) {
			u := pick(r, people)
			if len(users.Content) > 0 && slices.Contains(userKeys(users), u) {
				continue
			}
			users.Content = append(users.Content, str(u), m("password", secret(r), "replication", r.IntN(4) == 0))
		}
		dbs := m()
		for i := range 1 + r.IntN(3) {
			dbName := fmt.Sprintf("%s%d", pick(r, appWords), i)
			dbs.Content = append(dbs.Content, str(dbName), m(
				"roles", m("admin", userKeys(users)[:1], "readonly", userKeys(users)),
				"extensions", extensions[:1+r.IntN(len(extensions))],
			))
		}
		base = append(base,
			"size", pick(r, sizes),
			"storageClass", pick(r, storageClass),
			"external", r.IntN(5) == 0,
			"version", fmt.Sprintf("v%d", 14+r.IntN(5)),
			"users", users,
			"databases", dbs,
			"backup", backup(r, name),
			"postgresql", m("parameters", m(
				"max_connections", 100+50*r.IntN(8),
				"shared_buffers", pick(r, memories),
				"work_mem", "16MB",
				"maintenance_work_mem", "256MB",
				"effective_cache_size", pick(r, memories),
				"log_min_duration_statement", 500+r.IntN(2000),
			)),
			"quorum", m("minSyncReplicas", r.IntN(2), "maxSyncReplicas", 1+r.IntN(2)),
			"bootstrap", m("enabled", false, "recoveryTime", "", "oldName", ""),
		)
	case profileCache:
		base = append(base,
			"size", pick(r, sizes[:3]),
			"storageClass", pick(r, storageClass),
			"authEnabled", r.IntN(4) > 0,
			"version", pick(r, []string{"v7", "v8"}),
			"external", false,
			"nodeSelector", m("node-role.kubernetes.io/cache", ""),
			"tolerations", tolerations(r),
		)
	case profileQueue:
		topics := []any{}
		for i := range 2 + r.IntN(5) {
			topics = append(topics, m(
				"name", fmt.Sprintf("%s.%s.v%d", name, pick(r, appWords), i),
				"partitions", 1+r.IntN(12),
				"replicas", 1+r.IntN(3),
				"config", m("cleanup.policy", pick(r, []string{"delete", "compact"}), "retention.ms", strconv.Itoa((1+r.IntN(14))*86400000), "min.insync.replicas", strconv.Itoa(1+r.IntN(2))),
			))
		}
		base = append(base,
			"size", pick(r, sizes),
			"storageClass", pick(r, storageClass),
			"external", r.IntN(4) == 0,
			"topics", topics,
			"zookeeper", m("replicas", 3, "size", "5Gi", "resourcesPreset", "small"),
		)
	case profileStorage:
		base = append(base,
			"size", pick(r, sizes),
			"storageClass", pick(r, storageClass),
			"source", m("http", m("url", fmt.Sprintf("https://cloud-images.example.com/%s/%s.qcow2", pick(r, appWords), name))),
			"optical", false,
			"lifecycle", []any{m("id", "expire-tmp", "prefix", "tmp/", "expirationDays", 1+r.IntN(30))},
		)
	case profileVM:
		keys := []string{}
		for range 1 + r.IntN(3) {
			keys = append(keys, fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s %s@%s", secret(r), pick(r, people), pick(r, tenantWords)))
		}
		disks := []any{}
		for i := range 1 + r.IntN(3) {
			disks = append(disks, m("name", fmt.Sprintf("%s-disk%d", name, i), "bus", pick(r, []string{"virtio", "sata"})))
		}
		base = append(base,
			"external", r.IntN(3) == 0,
			"externalMethod", "PortList",
			"externalPorts", []any{22, 80, 443},
			"running", true,
			"instanceType", pick(r, instanceTypes),
			"instanceProfile", pick(r, []string{"ubuntu", "centos", "fedora", "windows.2k22"}),
			"disks", disks,
			"gpus", []any{},
			"sshKeys", keys,
			"cloudInit", fmt.Sprintf("#cloud-config\nhostname: %s\npackage_update: true\npackages:\n  - qemu-guest-agent\n  - htop\nruncmd:\n  - systemctl enable --now qemu-guest-agent\n  - echo 'provisioned by cozystack' > /etc/motd\nwrite_files:\n  - path: /etc/app.env\n    content: |\n      APP_NAME=%s\n      APP_ENV=%s\n", name, name, pick(r, subTenantWords)),
			"cloudInitSeed", "",
		)
	case profileKubernetes:
		groups := m()
		for i := range 1 + r.IntN(3) {
			groups.Content = append(groups.Content, str(fmt.Sprintf("md%d", i)), m(
				"minReplicas", r.IntN(2),
				"maxReplicas", 2+r.IntN(8),
				"instanceType", pick(r, instanceTypes),
				"ephemeralStorage", pick(r, sizes[2:5]),
				"roles", []string{"ingress-nginx"},
				"resources", resources(r),
				"gpus", []any{},
			))
		}
		base = append(base,
			"version", fmt.Sprintf("v1.%d", 30+r.IntN(5)),
			"host", "",
			"storageClass", pick(r, storageClass),
			"nodeGroups", groups,
			"addons", m(
				"certManager", m("enabled", true, "valuesOverride", m()),
				"cilium", m("valuesOverride", m()),
				"gatewayAPI", m("enabled", r.IntN(2) == 0),
				"ingressNginx", m("enabled", true, "exposeMethod", "Proxied", "hosts", []string{fmt.Sprintf("%s.example.org", name)}, "valuesOverride", m()),
				"gpuOperator", m("enabled", false, "valuesOverride", m()),
				"fluxcd", m("enabled", r.IntN(2) == 0, "valuesOverride", m()),
				"monitoringAgents", m("enabled", true, "valuesOverride", m()),
				"verticalPodAutoscaler", m("valuesOverride", m()),
				"velero", m("enabled", false, "valuesOverride", m()),
			),
			"controlPlane", m(
				"replicas", 2,
				"apiServer", m("resourcesPreset", "medium"),
				"controllerManager", m("resourcesPreset", "micro"),
				"scheduler", m("resourcesPreset", "micro"),
				"konnectivity", m("server", m("resourcesPreset", "micro")),
			),
		)
	case profileNetwork:
		base = append(base,
			"external", true,
			"whitelistHTTP", r.IntN(2) == 0,
			"whitelist", []string{"10.0.0.0/8", "192.168.0.0/16", fmt.Sprintf("203.0.113.%d/32", r.IntN(255))},
			"endpoints", []string{fmt.Sprintf("10.100.%d.%d:8080", r.IntN(255), r.IntN(255)), fmt.Sprintf("10.100.%d.%d:8080", r.IntN(255), r.IntN(255))},
			"httpAndHttps", m("mode", "tcp", "targetPorts", m("http", 80, "https", 443)),
			"haproxy", m("replicas", 2, "resourcesPreset", "nano"),
			"nginx", m("replicas", 2, "resourcesPreset", "nano"),
		)
	case profileNotebook:
		profiles := []any{}
		for i := range 1 + r.IntN(3) {
			profiles = append(profiles, m(
				"display_name", fmt.Sprintf("%s environment %d", strings.ToUpper(pick(r, appWords)[:1])+pick(r, appWords)[1:], i),
				"description", "CPU and memory for interactive work; GPUs on request.",
				"kubespawner_override", m("image", pick(r, images)+":2025-0"+strconv.Itoa(1+r.IntN(9)), "cpu_limit", 1+r.IntN(8), "mem_limit", pick(r, memories)),
			))
		}
		admins := []string{}
		for range 1 + r.IntN(3) {
			admins = append(admins, pick(r, people))
		}
		base = append(base,
			"users", 5+r.IntN(50),
			"image", m("name", pick(r, images), "tag", fmt.Sprintf("2025.%d", 1+r.IntN(12))),
			"storage", m("size", pick(r, sizes), "storageClass", pick(r, storageClass)),
			"auth", m("type", "oauth", "admins", admins, "allowedGroups", []string{"data-science", "research"}),
			"profiles", profiles,
			"env", env(r, 2+r.IntN(4)),
			"startupScript", "#!/bin/sh\nset -eu\npip install --quiet --user -r /home/jovyan/requirements.txt\nexec start-notebook.sh \"$@\"\n",
			"idleTimeout", fmt.Sprintf("%dm", 30+r.IntN(90)),
		)
	case profileWorkflow:
		base = append(base,
			"image", m("name", pick(r, images), "tag", fmt.Sprintf("1.%d.%d", r.IntN(90), r.IntN(10))),
			"database", m("type", "postgres", "host", fmt.Sprintf("postgres-%s-rw", pick(r, appWords)), "port", 5432, "name", name, "user", pick(r, people)),
			"queue", m("mode", "queue", "workers", 1+r.IntN(6), "concurrency", 5+r.IntN(20)),
			"webhook", m("url", fmt.Sprintf("https://%s.example.org/", name), "timeout", "30s"),
			"env", env(r, 3+r.IntN(6)),
			"schedules", []any{m("name", "nightly", "cron", pick(r, schedules)), m("name", "hourly", "cron", "0 * * * *")},
			"externalSecrets", []string{fmt.Sprintf("%s-credentials", name), fmt.Sprintf("%s-tokens", name)},
			"config", fmt.Sprintf("executions:\n  pruneData: true\n  pruneDataMaxAge: %d\nlogs:\n  level: info\n  output: console\nsecurity:\n  blockFileAccessToN8nFiles: true\n", 24*(1+r.IntN(30))),
		)
	default:
		base = append(base,
			"size", pick(r, sizes),
			"storageClass", pick(r, storageClass),
			"retention", fmt.Sprintf("%dd", 7+r.IntN(60)),
			"alerta", m("storage", "10Gi", "alerts", m("telegram", m("token", secret(r), "chatID", strconv.Itoa(r.IntN(1_000_000))))),
			"tolerations", tolerations(r),
		)
	}
	return m(base...)
}

func userKeys(users *yaml.Node) []string {
	var out []string
	for i := 0; i+1 < len(users.Content); i += 2 {
		out = append(out, users.Content[i].Value)
	}
	if len(out) == 0 {
		out = []string{"app"}
	}
	return out
}
