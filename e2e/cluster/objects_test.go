package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	if namespace != "" {
		o["metadata"].(map[string]any)["namespace"] = namespace
	}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func namespace(name string) *unstructured.Unstructured {
	return obj("v1", "Namespace", "", name, nil)
}

func secret(namespace, name string, data map[string]string) *unstructured.Unstructured {
	sd := map[string]any{}
	for k, v := range data {
		sd[k] = v
	}
	return obj("v1", "Secret", namespace, name, map[string]any{"stringData": sd})
}

// pod is a one-container pod of the pause image; mutate shapes its security.
func pod(namespace, name string, mutate func(spec, container map[string]any)) *unstructured.Unstructured {
	c := map[string]any{"name": "main", "image": "registry.k8s.io/pause:3.10"}
	spec := map[string]any{"containers": []any{c}}
	if mutate != nil {
		mutate(spec, c)
	}
	return obj("v1", "Pod", namespace, name, map[string]any{"spec": spec})
}

// restrictedPod meets Pod Security's restricted level.
func restrictedPod(namespace, name string) *unstructured.Unstructured {
	return pod(namespace, name, func(spec, c map[string]any) {
		spec["securityContext"] = map[string]any{"runAsNonRoot": true, "runAsUser": int64(65532),
			"seccompProfile": map[string]any{"type": "RuntimeDefault"}}
		c["securityContext"] = map[string]any{"allowPrivilegeEscalation": false,
			"capabilities": map[string]any{"drop": []any{"ALL"}}}
	})
}

func privilegedPod(namespace, name string) *unstructured.Unstructured {
	return pod(namespace, name, func(spec, c map[string]any) {
		c["securityContext"] = map[string]any{"privileged": true}
	})
}

func hostPathPod(namespace, name string) *unstructured.Unstructured {
	return pod(namespace, name, func(spec, c map[string]any) {
		spec["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/"}}}
		c["volumeMounts"] = []any{map[string]any{"name": "host", "mountPath": "/host"}}
	})
}
