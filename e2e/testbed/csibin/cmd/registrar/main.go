// registrar: registers a CSI driver's socket with the kubelet through its plugin watcher, as a node's
// driver registrar does: it asks the driver its name, then serves the kubelet's registration API on a
// socket in the kubelet's plugins_registry folder until stopped, and removes that socket on the way out.
// The upstream node-driver-registrar is not served by the Go module proxy here.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

var version = "dev"

type registration struct {
	registerapi.UnimplementedRegistrationServer
	name     string
	endpoint string
	failed   chan string
}

func (r *registration) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              r.name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registration) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if s.PluginRegistered {
		log.Printf("the kubelet registered %s", r.name)
	} else {
		r.failed <- s.Error
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// driverName asks the CSI socket for the driver's name, until it answers or the deadline passes.
func driverName(socket string, deadline time.Duration) (string, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for {
		info, err := csi.NewIdentityClient(conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{}, grpc.WaitForReady(true))
		if err == nil {
			return info.GetName(), nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("the driver at %s did not answer in %s: %w", socket, deadline, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func main() {
	csiAddress := flag.String("csi-address", "", "the driver's CSI socket")
	kubeletPath := flag.String("kubelet-registration-path", "", "the driver's socket as the kubelet sees it (default: --csi-address)")
	regDir := flag.String("plugin-registration-dir", "", "the kubelet's plugins_registry folder")
	wait := flag.Duration("driver-timeout", time.Minute, "how long to wait for the driver to answer")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("registrar", version)
		return
	}
	if *csiAddress == "" || *regDir == "" {
		log.Fatal("--csi-address and --plugin-registration-dir are required")
	}
	if *kubeletPath == "" {
		*kubeletPath = *csiAddress
	}
	name, err := driverName(*csiAddress, *wait)
	if err != nil {
		log.Fatal(err)
	}
	socket := filepath.Join(*regDir, name+"-reg.sock")
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		log.Fatal(err)
	}
	r := &registration{name: name, endpoint: *kubeletPath, failed: make(chan string, 1)}
	srv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(srv, r)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	code := 0
	go func() {
		select {
		case <-sig:
		case msg := <-r.failed:
			log.Printf("the kubelet refused %s: %s", name, msg)
			code = 1
		}
		srv.Stop()
	}()
	log.Printf("registering %s (%s) at %s", name, *kubeletPath, socket)
	if err := srv.Serve(l); err != nil {
		log.Print(err)
		code = 1
	}
	_ = os.Remove(socket)
	os.Exit(code)
}
