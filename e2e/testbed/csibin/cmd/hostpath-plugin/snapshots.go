package main

// Snapshots: a snapshot is a copy of a volume's folder in the state folder's `snapshots`, and a volume made
// from one is a copy back. A copy is consistent because nothing writes the folder while it runs: a volume
// mounted writable anywhere on this host (a pod's bind mount, seen in the mount table) is refused with
// FAILED_PRECONDITION and the mount named, and while the copy runs no writable mount of it is made
// (NodePublishVolume answers UNAVAILABLE; the kubelet retries). Copies run outside d.mu, in a `partial`
// folder renamed into place when whole; what they will hold counts against the capacity meanwhile.

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func (d *driver) snapshotPath(id string) string {
	return filepath.Join(d.stateDir, "snapshots", escapeID(id))
}

func (d *driver) partialDir() string { return filepath.Join(d.stateDir, "partial") }

func ceilGiB(n int64) int64 { return (n + gib - 1) / gib * gib }

func snapshotOf(id string, s snapshotState) *csi.Snapshot {
	return &csi.Snapshot{
		SnapshotId:     id,
		SourceVolumeId: s.Source,
		SizeBytes:      s.Size,
		CreationTime:   timestamppb.New(s.Created),
		ReadyToUse:     true,
	}
}

func (d *driver) CreateSnapshot(_ context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	name, source := req.GetName(), req.GetSourceVolumeId()
	if name == "" || source == "" {
		return nil, status.Error(codes.InvalidArgument, "name and source volume id are required")
	}
	key := "snapshot/" + name
	d.mu.Lock()
	st, err := d.readState()
	if err != nil {
		d.mu.Unlock()
		return nil, status.Error(codes.Internal, err.Error())
	}
	// The same name again: a retry of one already cut is answered with it.
	if s, ok := st.Snapshots[name]; ok {
		d.mu.Unlock()
		if s.Source != source {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %q is of volume %q, not %q", name, s.Source, source)
		}
		return &csi.CreateSnapshotResponse{Snapshot: snapshotOf(name, s)}, nil
	}
	if _, busy := d.pending[key]; busy {
		d.mu.Unlock()
		return nil, status.Errorf(codes.Aborted, "snapshot %q is being cut", name)
	}
	vol, ok := st.Volumes[source]
	from := d.volumePath(source)
	if _, err := os.Stat(from); !ok || err != nil {
		d.mu.Unlock()
		return nil, status.Errorf(codes.NotFound, "volume %q", source)
	}
	writers, err := writableMounts(from)
	if err != nil {
		d.mu.Unlock()
		return nil, status.Error(codes.Internal, err.Error())
	}
	if len(writers) > 0 {
		d.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition,
			"volume %q is mounted writable at %s: a copy taken while something may write would not be consistent; stop what mounts it (pause the session) and snapshot again",
			source, strings.Join(writers, ", "))
	}
	held := ceilGiB(usedBytes(from))
	free, err := d.free(st)
	if err != nil {
		d.mu.Unlock()
		return nil, status.Error(codes.Internal, err.Error())
	}
	if held > free {
		d.mu.Unlock()
		return nil, status.Errorf(codes.ResourceExhausted, "no room for the snapshot: %d bytes needed, %d free", held, free)
	}
	d.cutting[source]++
	d.pending[key] = held
	d.mu.Unlock()

	t0 := time.Now()
	tmp := filepath.Join(d.partialDir(), "snapshot-"+escapeID(name))
	copied, cerr := copyTree(from, tmp)

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cutting[source]--; d.cutting[source] <= 0 {
		delete(d.cutting, source)
	}
	delete(d.pending, key)
	if cerr == nil {
		cerr = os.Rename(tmp, d.snapshotPath(name))
	}
	if cerr != nil {
		_ = os.RemoveAll(tmp)
		return nil, status.Errorf(codes.Internal, "copying volume %q: %v", source, cerr)
	}
	s := snapshotState{Source: source, Size: vol.Size, Held: ceilGiB(copied), Created: time.Now().UTC()}
	if st, err = d.readState(); err == nil {
		st.Snapshots[name] = s
		err = d.writeState(st)
	}
	if err != nil {
		_ = os.RemoveAll(d.snapshotPath(name))
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("snapshot %s of %s: %d bytes copied in %s", name, source, copied, time.Since(t0).Round(time.Millisecond))
	return &csi.CreateSnapshotResponse{Snapshot: snapshotOf(name, s)}, nil
}

func (d *driver) DeleteSnapshot(_ context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot id is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reading[id] > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "snapshot %q is being restored into a volume", id)
	}
	if _, busy := d.pending["snapshot/"+id]; busy {
		return nil, status.Errorf(codes.Aborted, "snapshot %q is being cut", id)
	}
	if err := os.RemoveAll(d.snapshotPath(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	st, err := d.readState()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	delete(st.Snapshots, id)
	if err := d.writeState(st); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.DeleteSnapshotResponse{}, nil
}

// ListSnapshots answers the snapshots cut, by id, optionally of one id or one source volume; the
// starting token is the index of the next entry.
func (d *driver) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	d.mu.Lock()
	st, err := d.readState()
	d.mu.Unlock()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	ids := make([]string, 0, len(st.Snapshots))
	for id, s := range st.Snapshots {
		if (req.GetSnapshotId() == "" || id == req.GetSnapshotId()) &&
			(req.GetSourceVolumeId() == "" || s.Source == req.GetSourceVolumeId()) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	start := 0
	if tok := req.GetStartingToken(); tok != "" {
		if start, err = strconv.Atoi(tok); err != nil || start < 0 || start > len(ids) {
			return nil, status.Errorf(codes.Aborted, "starting token %q is not one this plugin gave", tok)
		}
	}
	end := len(ids)
	if n := int(req.GetMaxEntries()); n > 0 && start+n < end {
		end = start + n
	}
	res := &csi.ListSnapshotsResponse{}
	for _, id := range ids[start:end] {
		res.Entries = append(res.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: snapshotOf(id, st.Snapshots[id])})
	}
	if end < len(ids) {
		res.NextToken = strconv.Itoa(end)
	}
	return res, nil
}

// createFromSnapshot makes volume id of `size` bytes filled with snapshot snapID's copy. A volume that
// exists already is never overwritten: the same call again is answered, any other is refused.
func (d *driver) createFromSnapshot(id string, size int64, snapID string) (*csi.CreateVolumeResponse, error) {
	source := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snapID},
	}}
	key := "volume/" + id
	d.mu.Lock()
	st, err := d.readState()
	if err != nil {
		d.mu.Unlock()
		return nil, status.Error(codes.Internal, err.Error())
	}
	snap, ok := st.Snapshots[snapID]
	if !ok {
		d.mu.Unlock()
		return nil, status.Errorf(codes.NotFound, "snapshot %q", snapID)
	}
	if size < snap.Size {
		d.mu.Unlock()
		return nil, status.Errorf(codes.OutOfRange, "snapshot %q needs a volume of at least %d bytes, %d asked", snapID, snap.Size, size)
	}
	if v, ok := st.Volumes[id]; ok {
		d.mu.Unlock()
		if v.FromSnapshot == snapID {
			return d.volumeResponse(st, id, source), nil
		}
		return nil, status.Errorf(codes.AlreadyExists, "volume %q holds data already; it is not overwritten from snapshot %q", id, snapID)
	}
	if _, busy := d.pending[key]; busy {
		d.mu.Unlock()
		return nil, status.Errorf(codes.Aborted, "volume %q is being filled from a snapshot", id)
	}
	free, err := d.free(st)
	if err != nil {
		d.mu.Unlock()
		return nil, status.Error(codes.Internal, err.Error())
	}
	if size > free {
		d.mu.Unlock()
		return nil, status.Errorf(codes.ResourceExhausted, "%d bytes asked, %d free", size, free)
	}
	d.pending[key] = size
	d.reading[snapID]++
	d.mu.Unlock()

	t0 := time.Now()
	tmp := filepath.Join(d.partialDir(), "volume-"+escapeID(id))
	copied, cerr := copyTree(d.snapshotPath(snapID), tmp)

	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, key)
	if d.reading[snapID]--; d.reading[snapID] <= 0 {
		delete(d.reading, snapID)
	}
	if cerr == nil {
		cerr = os.Rename(tmp, d.volumePath(id))
	}
	if cerr != nil {
		_ = os.RemoveAll(tmp)
		return nil, status.Errorf(codes.Internal, "filling volume %q from snapshot %q: %v", id, snapID, cerr)
	}
	if st, err = d.readState(); err == nil {
		st.Volumes[id] = volumeState{Size: size, FromSnapshot: snapID}
		err = d.writeState(st)
	}
	if err != nil {
		_ = os.RemoveAll(d.volumePath(id))
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("volume %s from snapshot %s: %d bytes copied in %s", id, snapID, copied, time.Since(t0).Round(time.Millisecond))
	return d.volumeResponse(st, id, source), nil
}

// usedBytes is what the files under path hold (as NodeGetVolumeStats counts it).
func usedBytes(path string) int64 {
	var used int64
	_ = filepath.WalkDir(path, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				used += info.Size()
			}
		}
		return nil
	})
	return used
}

// writableMounts answers the mount points, in this process's mount table, that show the folder at path
// (or a folder within it) writable: bind mounts whose root, on the same device, is that folder.
func writableMounts(path string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	type mount struct{ dev, root, at, opts string }
	var table []mount
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 5 {
			table = append(table, mount{dev: f[2], root: unescapeMountPath(f[3]), at: unescapeMountPath(f[4]), opts: f[5]})
		}
	}
	// The mount the folder is reached through: the longest mount point above it (the last one of that
	// point, which covers those before it). Its root locates the folder within the device.
	var home *mount
	for i := range table {
		m := &table[i]
		if (path == m.at || strings.HasPrefix(path, strings.TrimSuffix(m.at, "/")+"/")) && (home == nil || len(m.at) >= len(home.at)) {
			home = m
		}
	}
	if home == nil {
		return nil, fmt.Errorf("no mount holds %s", path)
	}
	within := filepath.Join(home.root, strings.TrimPrefix(path, home.at))
	var out []string
	for _, m := range table {
		if m.dev != home.dev || m.at == home.at || !(m.root == within || strings.HasPrefix(m.root, within+"/")) {
			continue
		}
		if strings.Split(m.opts, ",")[0] == "rw" {
			out = append(out, m.at)
		}
	}
	return out, nil
}

// copyTree copies the folder src to dst (which must not exist): folders, regular files, symbolic links and
// named pipes, with their modes, owners and times; sockets are left out (a process's, not data), devices
// refused. Hard links become separate files. It answers the bytes of the files copied.
func copyTree(src, dst string) (int64, error) {
	var n int64
	type times struct {
		path         string
		atime, mtime time.Time
	}
	var dirs []times
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := e.Info()
		if err != nil {
			return err
		}
		sys, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no stat", rel)
		}
		mode := info.Mode()
		atime, mtime := time.Unix(sys.Atim.Sec, sys.Atim.Nsec), info.ModTime()
		switch {
		case mode.IsDir():
			if err := os.Mkdir(to, 0o700); err != nil {
				return err
			}
			dirs = append(dirs, times{to, atime, mtime})
		case mode.IsRegular():
			c, err := copyFile(p, to)
			if err != nil {
				return err
			}
			n += c
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
			return os.Lchown(to, int(sys.Uid), int(sys.Gid))
		case mode&fs.ModeNamedPipe != 0:
			if err := syscall.Mkfifo(to, 0o600); err != nil {
				return err
			}
		case mode&fs.ModeSocket != 0:
			return nil
		default:
			return fmt.Errorf("%s is a device file: not copied", rel)
		}
		// Owner first: a change of owner clears the set-id bits the mode then sets.
		if err := os.Lchown(to, int(sys.Uid), int(sys.Gid)); err != nil {
			return err
		}
		if err := os.Chmod(to, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return err
		}
		if !mode.IsDir() {
			return os.Chtimes(to, atime, mtime)
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	// A folder's times last, deepest first: copying into it moved them.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chtimes(dirs[i].path, dirs[i].atime, dirs[i].mtime); err != nil {
			return n, err
		}
	}
	return n, nil
}

func copyFile(from, to string) (int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	// io.Copy between files uses copy_file_range: the kernel copies, as cp does.
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
