// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3/etcdmain),
// built from its Go module so the end-to-end suite needs no downloaded binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
