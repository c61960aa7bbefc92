// A device plugin for the real node of the test bed, which has no GPU: it advertises N fake devices of
// one resource (nvidia.com/gpu) to the kubelet, and Allocate hands the container NVIDIA_VISIBLE_DEVICES
// naming the ids it got, as NVIDIA's plugin does. The kubelet removes every socket in its device-plugin
// folder when it starts, so the plugin watches for that and serves and registers again.
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
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	ids  []string
	envs map[string]string
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	devs := make([]*pluginapi.Device, 0, len(p.ids))
	for _, id := range p.ids {
		devs = append(devs, &pluginapi.Device{ID: id, Health: pluginapi.Healthy})
	}
	if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
		return err
	}
	<-s.Context().Done() // the devices never change
	return nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	out := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		envs := map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(c.DevicesIds, ",")}
		for k, v := range p.envs {
			envs[k] = v
		}
		out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerAllocateResponse{Envs: envs})
		log.Printf("allocated %s", strings.Join(c.DevicesIds, ","))
	}
	return out, nil
}

func (p *plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func main() {
	dir := flag.String("dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin folder")
	resource := flag.String("resource", "nvidia.com/gpu", "resource name")
	endpoint := flag.String("endpoint", "berth-fake-gpu.sock", "socket name inside -dir")
	ids := flag.String("ids", "", "comma-separated device ids")
	count := flag.Int("count", 0, "number of devices (ids fake-gpu-0..N-1) when -ids is empty")
	flag.Parse()
	p := &plugin{envs: map[string]string{"BERTH_FAKE_GPU": "true"}}
	if *ids != "" {
		p.ids = strings.Split(*ids, ",")
	}
	for i := 0; len(p.ids) < *count; i++ {
		p.ids = append(p.ids, fmt.Sprintf("fake-gpu-%d", i))
	}
	sock := filepath.Join(*dir, *endpoint)
	kubelet := filepath.Join(*dir, "kubelet.sock")

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	var srv *grpc.Server
	var kubeletIno uint64
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		// Serve and register again when our socket vanished or the kubelet's socket is a new one.
		var ks syscall.Stat_t
		kerr := syscall.Stat(kubelet, &ks)
		_, serr := os.Stat(sock)
		if kerr == nil && (srv == nil || serr != nil || ks.Ino != kubeletIno) {
			if srv != nil {
				srv.Stop()
			}
			var err error
			if srv, err = serve(p, sock); err != nil {
				log.Printf("serve: %v", err)
			} else if err = register(kubelet, *endpoint, *resource); err != nil {
				log.Printf("register: %v", err)
				srv.Stop()
				srv = nil
			} else {
				kubeletIno = ks.Ino
				log.Printf("registered %s with %d devices at %s", *resource, len(p.ids), sock)
			}
		}
		select {
		case <-stop:
			if srv != nil {
				srv.Stop()
			}
			os.Remove(sock)
			return
		case <-tick.C:
		}
	}
}

func serve(p *plugin, sock string) (*grpc.Server, error) {
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go srv.Serve(l)
	return srv, nil
}

func register(kubelet, endpoint, resource string) error {
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: endpoint, ResourceName: resource,
	})
	return err
}
