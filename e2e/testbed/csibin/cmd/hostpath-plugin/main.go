// hostpath-plugin: the test bed's CSI driver. Each volume is a folder under --state-dir on the one node it
// runs for; the node service bind-mounts it into a pod's target path. It answers GetCapacity (the
// configured total less what its volumes were given), so the external-provisioner publishes
// CSIStorageCapacity from it, and NodeGetVolumeStats (the folder's use against its size) for the kubelet's
// stats summary. The upstream hostpath driver is not served by the Go module proxy here; this one
// implements the parts of the CSI spec the bed exercises (docs/dev/storage.md, "A real driver on the real node").
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var version = "dev"

const (
	// The claim's namespace and name, passed by the external-provisioner's --extra-create-metadata. A volume
	// made for them is named after them, so a claim deleted and made again (Retain) reaches the same data.
	paramClaimName      = "csi.storage.k8s.io/pvc/name"
	paramClaimNamespace = "csi.storage.k8s.io/pvc/namespace"
	gib                 = int64(1) << 30
)

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	name        string
	nodeID      string
	topologyKey string
	stateDir    string
	capacity    int64 // bytes; 0: the state folder's free space

	mu sync.Mutex // volume creation and deletion, and the sizes file
}

// Sizes given to volumes, by volume id, kept in one file so GetCapacity survives a restart.
func (d *driver) sizesPath() string { return filepath.Join(d.stateDir, "sizes.json") }

func (d *driver) readSizes() (map[string]int64, error) {
	sizes := map[string]int64{}
	b, err := os.ReadFile(d.sizesPath())
	if errors.Is(err, fs.ErrNotExist) {
		return sizes, nil
	}
	if err != nil {
		return nil, err
	}
	return sizes, json.Unmarshal(b, &sizes)
}

func (d *driver) writeSizes(sizes map[string]int64) error {
	b, err := json.Marshal(sizes)
	if err != nil {
		return err
	}
	tmp := d.sizesPath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.sizesPath())
}

// A volume id may hold a slash (namespace/name); its folder name escapes it.
func (d *driver) volumePath(id string) string {
	return filepath.Join(d.stateDir, "volumes", url.PathEscape(strings.ReplaceAll(id, "/", "~")))
}

func (d *driver) topology() []*csi.Topology {
	return []*csi.Topology{{Segments: map[string]string{d.topologyKey: d.nodeID}}}
}

func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: version}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	svc := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		svc(csi.PluginCapability_Service_CONTROLLER_SERVICE),
		svc(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS),
	}}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

func (d *driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpc(csi.ControllerServiceCapability_RPC_GET_CAPACITY),
	}}, nil
}

func checkCapabilities(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	for _, c := range caps {
		if c.GetBlock() != nil {
			return status.Error(codes.InvalidArgument, "block volumes are not supported: this driver serves folders")
		}
	}
	return nil
}

// free is the capacity not yet given to a volume; callers hold d.mu.
func (d *driver) free(sizes map[string]int64) (int64, error) {
	total := d.capacity
	if total == 0 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d.stateDir, &st); err != nil {
			return 0, err
		}
		return int64(st.Bavail) * int64(st.Bsize), nil
	}
	for _, s := range sizes {
		total -= s
	}
	return max(total, 0), nil
}

func (d *driver) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.InvalidArgument, "volume content sources are not supported")
	}
	id := req.GetName()
	p := req.GetParameters()
	if p[paramClaimNamespace] != "" && p[paramClaimName] != "" {
		id = p[paramClaimNamespace] + "/" + p[paramClaimName]
	}
	size := max(req.GetCapacityRange().GetRequiredBytes(), gib)
	if lim := req.GetCapacityRange().GetLimitBytes(); lim > 0 && lim < size {
		return nil, status.Errorf(codes.OutOfRange, "limit %d is below the smallest volume, %d bytes", lim, size)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sizes, err := d.readSizes()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// The same id again (a retry, or the claim made again) reaches the same folder; it never shrinks.
	grow := size - sizes[id]
	if grow > 0 {
		free, err := d.free(sizes)
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if grow > free {
			return nil, status.Errorf(codes.ResourceExhausted, "%d bytes asked, %d free", grow, free)
		}
		sizes[id] = size
	}
	if err := os.MkdirAll(d.volumePath(id), 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// Pods of any user may write there (the mode above is cut by the umask).
	if err := os.Chmod(d.volumePath(id), 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := d.writeSizes(sizes); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:           id,
		CapacityBytes:      sizes[id],
		AccessibleTopology: d.topology(),
	}}, nil
}

func (d *driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.RemoveAll(d.volumePath(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	sizes, err := d.readSizes()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	delete(sizes, id)
	if err := d.writeSizes(sizes); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (d *driver) GetCapacity(_ context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if seg := req.GetAccessibleTopology().GetSegments(); len(seg) > 0 && seg[d.topologyKey] != d.nodeID {
		return &csi.GetCapacityResponse{AvailableCapacity: 0}, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sizes, err := d.readSizes()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	free, err := d.free(sizes)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.GetCapacityResponse{AvailableCapacity: free}, nil
}

func (d *driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if _, err := os.Stat(d.volumePath(req.GetVolumeId())); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q", req.GetVolumeId())
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.GetVolumeCapabilities(),
	}}, nil
}

func (d *driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.nodeID, AccessibleTopology: d.topology()[0]}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: csi.NodeServiceCapability_RPC_GET_VOLUME_STATS}},
	}}}, nil
}

// mounted says whether path is a mount point, from this process's mount table.
func mounted(path string) (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// The fifth field is the mount point, with spaces and the like octal-escaped.
		if len(f) > 4 && unescapeMountPath(f[4]) == path {
			return true, nil
		}
	}
	return false, nil
}

func unescapeMountPath(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

func (d *driver) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if req.GetVolumeId() == "" || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id and target path are required")
	}
	if err := checkCapabilities([]*csi.VolumeCapability{req.GetVolumeCapability()}); err != nil {
		return nil, err
	}
	src := d.volumePath(req.GetVolumeId())
	if _, err := os.Stat(src); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q has no data on this node", req.GetVolumeId())
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if ok, err := mounted(target); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	} else if ok {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := syscall.Mount(src, target, "", syscall.MS_BIND, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "bind mount %s on %s: %v", src, target, err)
	}
	if req.GetReadonly() {
		// A bind mount takes read-only only on a remount.
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			_ = syscall.Unmount(target, 0)
			return nil, status.Errorf(codes.Internal, "read-only remount of %s: %v", target, err)
		}
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if req.GetVolumeId() == "" || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id and target path are required")
	}
	ok, err := mounted(target)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if ok {
		if err := syscall.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (d *driver) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	id := req.GetVolumeId()
	if _, err := os.Stat(d.volumePath(id)); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q", id)
	}
	var used int64
	_ = filepath.WalkDir(d.volumePath(id), func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				used += info.Size()
			}
		}
		return nil
	})
	d.mu.Lock()
	sizes, err := d.readSizes()
	d.mu.Unlock()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	total := sizes[id]
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{
		Unit: csi.VolumeUsage_BYTES, Total: total, Used: used, Available: max(total-used, 0),
	}}}, nil
}

func main() {
	endpoint := flag.String("endpoint", "", "the CSI socket's path")
	d := &driver{}
	flag.StringVar(&d.name, "drivername", "hostpath.csi.bed.berth.dev", "the driver's name")
	flag.StringVar(&d.nodeID, "nodeid", "", "the node's name (its Node object's)")
	flag.StringVar(&d.stateDir, "state-dir", "", "where volumes and their sizes are kept")
	capGiB := flag.Int64("capacity-gib", 0, "the pool's total in GiB that GetCapacity gives out; 0: the state folder's free space")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("hostpath-plugin", version)
		return
	}
	if *endpoint == "" || d.nodeID == "" || d.stateDir == "" {
		log.Fatal("--endpoint, --nodeid and --state-dir are required")
	}
	d.topologyKey = "topology." + d.name + "/node"
	d.capacity = *capGiB * gib
	if err := os.MkdirAll(filepath.Join(d.stateDir, "volumes"), 0o755); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(*endpoint)
	l, err := net.Listen("unix", *endpoint)
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err != nil {
			log.Printf("%s: %v", info.FullMethod, err)
		}
		return resp, err
	}))
	csi.RegisterIdentityServer(srv, d)
	csi.RegisterControllerServer(srv, d)
	csi.RegisterNodeServer(srv, d)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sig; srv.GracefulStop() }()
	log.Printf("%s %s serving node %s on %s", d.name, version, d.nodeID, *endpoint)
	if err := srv.Serve(l); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(*endpoint)
}
