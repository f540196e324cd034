// Command etcd is etcd's own server entry point (etcdmain), at the etcd release k8s.io/kubernetes requires.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
