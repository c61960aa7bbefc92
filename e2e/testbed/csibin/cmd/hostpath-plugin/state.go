package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// What the plugin has given out, kept in one file so GetCapacity and snapshots survive a restart.
type state struct {
	Volumes   map[string]volumeState   `json:"volumes"`
	Snapshots map[string]snapshotState `json:"snapshots"`
}

type volumeState struct {
	// Bytes given to the volume (its claim's size, at least 1 GiB).
	Size int64 `json:"size"`
	// The snapshot it was filled from, if any: a retried CreateVolume from the same one is answered, not refilled.
	FromSnapshot string `json:"fromSnapshot,omitempty"`
}

type snapshotState struct {
	Source string `json:"source"`
	// The source volume's size: the smallest volume a restore needs (the VolumeSnapshot's restoreSize).
	Size int64 `json:"size"`
	// What the copy takes of the capacity: its bytes, rounded up to whole GiB as volumes are given.
	Held    int64     `json:"held"`
	Created time.Time `json:"created"`
}

func (d *driver) statePath() string { return filepath.Join(d.stateDir, "state.json") }

// readState reads the state file; callers hold d.mu.
func (d *driver) readState() (*state, error) {
	st := &state{}
	b, err := os.ReadFile(d.statePath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if err := json.Unmarshal(b, st); err != nil {
			return nil, err
		}
	}
	if st.Volumes == nil {
		st.Volumes = map[string]volumeState{}
	}
	if st.Snapshots == nil {
		st.Snapshots = map[string]snapshotState{}
	}
	return st, nil
}

// writeState replaces the state file whole (write, then rename); callers hold d.mu.
func (d *driver) writeState(st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := d.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.statePath())
}
