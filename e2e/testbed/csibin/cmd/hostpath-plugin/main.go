// hostpath-plugin: the test bed's CSI driver. Each volume is a folder under --state-dir on the one node it
// runs for; the node service bind-mounts it into a pod's target path. It answers GetCapacity (the
// configured total less what its volumes were given), so the external-provisioner publishes
// CSIStorageCapacity from it, and NodeGetVolumeStats (the folder's use against its size) for the kubelet's
// stats summary. Snapshots are copies of a volume's folder (snapshots.go), and a volume may be made from
// one. The upstream hostpath driver is not served by the Go module proxy here; this one implements the parts
// of the CSI spec the bed exercises (docs/dev/storage.md, "A real driver on the real node" and "Snapshots").
package main

import (
	"context"
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

	// mu guards the state file and the maps below; copies run without it (snapshots.go).
	mu sync.Mutex
	// Volumes whose folder is being copied into a snapshot: not mounted writable meanwhile.
	cutting map[string]int
	// Snapshots being cut (by name) and restores being filled (by volume id), with the bytes each holds
	// of the capacity until it is recorded.
	pending map[string]int64
	// Snapshots being read by a restore: not deleted meanwhile.
	reading map[string]int
}

// A volume id may hold a slash (namespace/name); its folder name escapes it.
func escapeID(id string) string { return url.PathEscape(strings.ReplaceAll(id, "/", "~")) }

func (d *driver) volumePath(id string) string {
	return filepath.Join(d.stateDir, "volumes", escapeID(id))
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
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT),
		rpc(csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS),
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

// free is the capacity not yet given to a volume, a snapshot or a copy under way; callers hold d.mu.
func (d *driver) free(st *state) (int64, error) {
	total := d.capacity
	if total == 0 {
		var fsst syscall.Statfs_t
		if err := syscall.Statfs(d.stateDir, &fsst); err != nil {
			return 0, err
		}
		return int64(fsst.Bavail) * int64(fsst.Bsize), nil
	}
	for _, v := range st.Volumes {
		total -= v.Size
	}
	for _, s := range st.Snapshots {
		total -= s.Held
	}
	for _, n := range d.pending {
		total -= n
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
	src := req.GetVolumeContentSource()
	if src != nil && src.GetSnapshot() == nil {
		return nil, status.Error(codes.InvalidArgument, "only snapshots are supported as a volume's content source")
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
	if src != nil {
		return d.createFromSnapshot(id, size, src.GetSnapshot().GetSnapshotId())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.readState()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := d.give(st, id, size); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(d.volumePath(id), 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// Pods of any user may write there (the mode above is cut by the umask).
	if err := os.Chmod(d.volumePath(id), 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := d.writeState(st); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return d.volumeResponse(st, id, nil), nil
}

// give records `size` bytes for volume id in st, within what is free. The same id again (a retry, or the
// claim made again) keeps its size or grows it; it never shrinks. Callers hold d.mu.
func (d *driver) give(st *state, id string, size int64) error {
	v := st.Volumes[id]
	grow := size - v.Size
	if grow <= 0 {
		return nil
	}
	free, err := d.free(st)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if grow > free {
		return status.Errorf(codes.ResourceExhausted, "%d bytes asked, %d free", grow, free)
	}
	v.Size = size
	st.Volumes[id] = v
	return nil
}

func (d *driver) volumeResponse(st *state, id string, src *csi.VolumeContentSource) *csi.CreateVolumeResponse {
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:           id,
		CapacityBytes:      st.Volumes[id].Size,
		AccessibleTopology: d.topology(),
		ContentSource:      src,
	}}
}

func (d *driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cutting[id] > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %q is being copied into a snapshot", id)
	}
	if err := os.RemoveAll(d.volumePath(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	st, err := d.readState()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	delete(st.Volumes, id)
	if err := d.writeState(st); err != nil {
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
	st, err := d.readState()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	free, err := d.free(st)
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
	// Under the lock a snapshot checks for writable mounts under: either it sees this mount, or this waits
	// (the kubelet retries) until its copy is done.
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cutting[req.GetVolumeId()] > 0 && !req.GetReadonly() {
		return nil, status.Errorf(codes.Unavailable, "volume %q is being copied into a snapshot; it is mounted writable once the copy is done", req.GetVolumeId())
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
	used := usedBytes(d.volumePath(id))
	d.mu.Lock()
	st, err := d.readState()
	d.mu.Unlock()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	total := st.Volumes[id].Size
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{
		Unit: csi.VolumeUsage_BYTES, Total: total, Used: used, Available: max(total-used, 0),
	}}}, nil
}

func main() {
	endpoint := flag.String("endpoint", "", "the CSI socket's path")
	d := &driver{}
	flag.StringVar(&d.name, "drivername", "hostpath.csi.bed.berth.dev", "the driver's name")
	flag.StringVar(&d.nodeID, "nodeid", "", "the node's name (its Node object's)")
	flag.StringVar(&d.stateDir, "state-dir", "", "where volumes, snapshots and what they were given are kept")
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
	d.cutting, d.pending, d.reading = map[string]int{}, map[string]int64{}, map[string]int{}
	// A copy cut short by a restart left only its partial folder, which nothing recorded: it goes.
	if err := os.RemoveAll(d.partialDir()); err != nil {
		log.Fatal(err)
	}
	for _, sub := range []string{"volumes", "snapshots", "partial"} {
		if err := os.MkdirAll(filepath.Join(d.stateDir, sub), 0o755); err != nil {
			log.Fatal(err)
		}
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
