// volume-probe: the whole image of the containers that the CSI driver's tests mount volumes into (no shell
// in it). It does one thing with a file and prints what it did:
//
//	volume-probe write FILE TEXT   writes TEXT into FILE, then waits to be stopped (the pod stays Running)
//	volume-probe read FILE         prints FILE's content, also as the container's termination message
//	                               (the kubelet reports it on the pod's status), and exits
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

var version = "dev"

func main() {
	args := os.Args[1:]
	switch {
	case len(args) == 1 && args[0] == "--version":
		fmt.Println("volume-probe", version)
		return
	case len(args) == 3 && args[0] == "write":
		if err := os.WriteFile(args[1], []byte(args[2]), 0o644); err != nil {
			fmt.Println("write failed:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s\n", args[1])
	case len(args) == 2 && args[0] == "read":
		b, err := os.ReadFile(args[1])
		if err != nil {
			fmt.Println("read failed:", err)
			os.Exit(1)
		}
		said := fmt.Sprintf("read %s: %s", args[1], b)
		fmt.Println(said)
		_ = os.WriteFile("/dev/termination-log", []byte(said), 0o644)
		return
	default:
		fmt.Fprintln(os.Stderr, "usage: volume-probe write FILE TEXT | read FILE")
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
