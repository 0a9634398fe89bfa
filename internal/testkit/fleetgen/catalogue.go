package fleetgen

// kindSpec is one ApplicationDefinition of the synthetic fleet, modelled on a
// Cozystack application of that name.
type kindSpec struct {
	Kind     string
	Singular string
	Plural   string
	Prefix   string
	Category string // dashboard category
	// Profile picks the shape of the apps' values (see values.go).
	Profile profile
	// Placement of a routed kind and how it is declared: "" (management
	// plane, no declaration), "spec", "annotation" or "both".
	Placement string
	// Timeout annotations; empty when not set.
	InstallTimeout string
	UpgradeTimeout string
	DisableWait    bool
	// Weight is how often apps of this kind occur relative to the others of
	// the same plane.
	Weight int
	// Module kinds are tenant modules (prefix "", one per tenant, named
	// like the kind's singular), as Etcd and Monitoring are in Cozystack.
	Module bool
	// SchemaOptions is the number of extra options in the values schema, which
	// sets the size of its openAPISchema string (real ones are 5 to 50 KB).
	SchemaOptions int
}

type profile int

const (
	profileDatabase profile = iota
	profileCache
	profileQueue
	profileStorage
	profileVM
	profileKubernetes
	profileNetwork
	profileNotebook
	profileWorkflow
	profileGeneric
)

// catalogue holds the 30 definitions: 24 on the management plane (Tenant
// among them, as in a real platform; its objects are the tenant list, never
// apps) and 6 code-running kinds routed onto the ComputePlane, declared in
// the three accepted ways.
var catalogue = []kindSpec{
	{Kind: "Bucket", Singular: "bucket", Plural: "buckets", Prefix: "bucket-", Category: "IaaS", Profile: profileStorage, Weight: 6, SchemaOptions: 8},
	{Kind: "ClickHouse", Singular: "clickhouse", Plural: "clickhouses", Prefix: "clickhouse-", Category: "PaaS", Profile: profileDatabase, Weight: 3, SchemaOptions: 40, InstallTimeout: "15m"},
	{Kind: "Etcd", Singular: "etcd", Plural: "etcds", Prefix: "", Category: "Administration", Profile: profileGeneric, Module: true, SchemaOptions: 12},
	{Kind: "FerretDB", Singular: "ferretdb", Plural: "ferretdbs", Prefix: "ferretdb-", Category: "PaaS", Profile: profileDatabase, Weight: 2, SchemaOptions: 25},
	{Kind: "FoundationDB", Singular: "foundationdb", Plural: "foundationdbs", Prefix: "foundationdb-", Category: "PaaS", Profile: profileDatabase, Weight: 1, SchemaOptions: 60, InstallTimeout: "20m", UpgradeTimeout: "30m"},
	{Kind: "HTTPCache", Singular: "httpcache", Plural: "httpcaches", Prefix: "http-cache-", Category: "NaaS", Profile: profileNetwork, Weight: 3, SchemaOptions: 20},
	{Kind: "Kafka", Singular: "kafka", Plural: "kafkas", Prefix: "kafka-", Category: "PaaS", Profile: profileQueue, Weight: 4, SchemaOptions: 45, InstallTimeout: "15m"},
	{Kind: "Kubernetes", Singular: "kubernetes", Plural: "kuberneteses", Prefix: "kubernetes-", Category: "IaaS", Profile: profileKubernetes, Weight: 3, SchemaOptions: 110, InstallTimeout: "30m", DisableWait: true},
	{Kind: "MariaDB", Singular: "mariadb", Plural: "mariadbs", Prefix: "mysql-", Category: "PaaS", Profile: profileDatabase, Weight: 5, SchemaOptions: 35},
	{Kind: "MongoDB", Singular: "mongodb", Plural: "mongodbs", Prefix: "mongodb-", Category: "PaaS", Profile: profileDatabase, Weight: 4, SchemaOptions: 40},
	{Kind: "NATS", Singular: "nats", Plural: "natses", Prefix: "nats-", Category: "PaaS", Profile: profileQueue, Weight: 3, SchemaOptions: 30},
	{Kind: "Postgres", Singular: "postgres", Plural: "postgreses", Prefix: "postgres-", Category: "PaaS", Profile: profileDatabase, Weight: 12, SchemaOptions: 70},
	{Kind: "RabbitMQ", Singular: "rabbitmq", Plural: "rabbitmqs", Prefix: "rabbitmq-", Category: "PaaS", Profile: profileQueue, Weight: 3, SchemaOptions: 30},
	{Kind: "Redis", Singular: "redis", Plural: "redises", Prefix: "redis-", Category: "PaaS", Profile: profileCache, Weight: 10, SchemaOptions: 15},
	{Kind: "TCPBalancer", Singular: "tcpbalancer", Plural: "tcpbalancers", Prefix: "tcp-balancer-", Category: "NaaS", Profile: profileNetwork, Weight: 2, SchemaOptions: 15},
	{Kind: "Tenant", Singular: "tenant", Plural: "tenants", Prefix: "tenant-", Category: "Administration", Profile: profileGeneric, Weight: 0, SchemaOptions: 20},
	{Kind: "VirtualMachine", Singular: "virtualmachine", Plural: "virtualmachines", Prefix: "virtual-machine-", Category: "IaaS", Profile: profileVM, Weight: 6, SchemaOptions: 55, DisableWait: true},
	{Kind: "VMDisk", Singular: "vmdisk", Plural: "vmdisks", Prefix: "vm-disk-", Category: "IaaS", Profile: profileStorage, Weight: 5, SchemaOptions: 10},
	{Kind: "VMInstance", Singular: "vminstance", Plural: "vminstances", Prefix: "vm-instance-", Category: "IaaS", Profile: profileVM, Weight: 5, SchemaOptions: 50, DisableWait: true},
	{Kind: "VPN", Singular: "vpn", Plural: "vpns", Prefix: "vpn-", Category: "NaaS", Profile: profileNetwork, Weight: 2, SchemaOptions: 15},
	{Kind: "Ingress", Singular: "ingress", Plural: "ingresses", Prefix: "ingress-", Category: "Administration", Profile: profileNetwork, Weight: 1, SchemaOptions: 20},
	{Kind: "Monitoring", Singular: "monitoring", Plural: "monitorings", Prefix: "", Category: "Administration", Profile: profileGeneric, Module: true, SchemaOptions: 80, InstallTimeout: "20m"},
	{Kind: "SeaweedFS", Singular: "seaweedfs", Plural: "seaweedfses", Prefix: "seaweedfs-", Category: "Administration", Profile: profileStorage, Weight: 1, SchemaOptions: 45},
	{Kind: "Qdrant", Singular: "qdrant", Plural: "qdrants", Prefix: "qdrant-", Category: "PaaS", Profile: profileDatabase, Weight: 2, SchemaOptions: 20},

	{Kind: "JupyterHub", Singular: "jupyterhub", Plural: "jupyterhubs", Prefix: "jupyterhub-", Category: "PaaS", Profile: profileNotebook, Placement: "annotation", Weight: 5, SchemaOptions: 60, InstallTimeout: "20m"},
	{Kind: "N8N", Singular: "n8n", Plural: "n8ns", Prefix: "n8n-", Category: "PaaS", Profile: profileWorkflow, Placement: "spec", Weight: 5, SchemaOptions: 30, InstallTimeout: "15m"},
	{Kind: "ComfyUI", Singular: "comfyui", Plural: "comfyuis", Prefix: "comfyui-", Category: "PaaS", Profile: profileNotebook, Placement: "annotation", Weight: 3, SchemaOptions: 25},
	{Kind: "Airflow", Singular: "airflow", Plural: "airflows", Prefix: "airflow-", Category: "PaaS", Profile: profileWorkflow, Placement: "spec", Weight: 3, SchemaOptions: 90, InstallTimeout: "20m", UpgradeTimeout: "30m"},
	{Kind: "CodeServer", Singular: "codeserver", Plural: "codeservers", Prefix: "code-server-", Category: "PaaS", Profile: profileNotebook, Placement: "both", Weight: 2, SchemaOptions: 15},
	{Kind: "Jenkins", Singular: "jenkins", Plural: "jenkinses", Prefix: "jenkins-", Category: "PaaS", Profile: profileWorkflow, Placement: "annotation", Weight: 2, SchemaOptions: 35, DisableWait: true},
}

// Words for tenant and app names: lowercase letters only, at most 8
// characters, so that nested namespaces and release names stay within their
// limits.
var tenantWords = []string{
	"acme", "globex", "initech", "umbrella", "stark", "wayne", "hooli", "vandelay",
	"wonka", "tyrell", "cyberdyn", "aperture", "soylent", "oscorp", "gringott", "monarch",
	"nakatomi", "dunder", "pied", "massive", "virtucon", "zorg", "kwikemart", "duff",
}

var subTenantWords = []string{"dev", "stage", "prod", "qa", "ml", "data", "web", "ops", "team", "lab"}

var appWords = []string{
	"main", "orders", "billing", "users", "search", "events", "reports", "sessions",
	"catalog", "payments", "audit", "metrics", "inbox", "media", "jobs", "ledger",
	"ingest", "notebook", "pipeline", "backend", "frontend", "gateway", "cache", "archive",
}
