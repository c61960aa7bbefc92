// CoreDNS for the bed's real node with only the plugins its Corefile uses
// (e2e/src/testbed/real-node/coredns.ts): CoreDNS's own main links every plugin and their cloud SDKs,
// which made the node's cold build take most of an hour. See docs/dev/real-node-network.md.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The order a query passes them in, as in CoreDNS's plugin.cfg; a Corefile directive not listed here is
// refused at start.
var directives = []string{
	"bind",
	"ready",
	"errors",
	"cache",
	"kubernetes",
	"forward",
}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}
