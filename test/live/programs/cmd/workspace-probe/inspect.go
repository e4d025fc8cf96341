package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// writableCheck is the outcome of trying to create a file in a directory.
type writableCheck struct {
	Path   string `json:"path"`
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// identity is what the runtime knows about the sandbox it runs in. It never
// includes environment variable values, which may be credentials.
type identity struct {
	OK                  bool                     `json:"ok"`
	PID                 int                      `json:"pid"`
	UID                 int                      `json:"uid"`
	GID                 int                      `json:"gid"`
	Groups              []int                    `json:"groups"`
	UIDMap              [][3]uint64              `json:"uidMap"` // [inside, outside, count]; null if unreadable
	GIDMap              [][3]uint64              `json:"gidMap"`
	Hostname            string                   `json:"hostname"`
	EnvNames            []string                 `json:"envNames"`
	ServiceAccountToken bool                     `json:"serviceAccountToken"`
	Writable            map[string]writableCheck `json:"writable"` // keyed "/", "/tmp", "/workspace", "$HOME"
	CapEff              string                   `json:"capEff"`   // effective capabilities, from /proc/self/status
	NoNewPrivs          string                   `json:"noNewPrivs"`
	Seccomp             string                   `json:"seccomp"`
	Errors              []string                 `json:"errors"` // parts that could not be read
}

func cmdInspect(_ context.Context, out *output, args []string) int {
	if len(args) != 0 {
		return out.usage("", "inspect takes no arguments")
	}
	return out.result(true, inspect())
}

func inspect() identity {
	id := identity{
		OK:       true,
		PID:      os.Getpid(),
		UID:      os.Getuid(),
		GID:      os.Getgid(),
		EnvNames: envNames(),
		Writable: map[string]writableCheck{},
		Errors:   []string{},
	}
	var err error
	if id.Groups, err = os.Getgroups(); err != nil {
		id.Errors = append(id.Errors, "groups: "+err.Error())
	}
	if id.Groups == nil {
		id.Groups = []int{}
	}
	if id.UIDMap, err = readIDMap("/proc/self/uid_map"); err != nil {
		id.Errors = append(id.Errors, err.Error())
	}
	if id.GIDMap, err = readIDMap("/proc/self/gid_map"); err != nil {
		id.Errors = append(id.Errors, err.Error())
	}
	if id.Hostname, err = os.Hostname(); err != nil {
		id.Errors = append(id.Errors, "hostname: "+err.Error())
	}
	_, err = os.Stat(serviceAccountDir + "/token")
	id.ServiceAccountToken = err == nil

	for _, dir := range []string{"/", "/tmp", "/workspace"} {
		id.Writable[dir] = checkWritable(dir)
	}
	if home := os.Getenv("HOME"); home != "" {
		id.Writable["$HOME"] = checkWritable(home)
	} else {
		id.Writable["$HOME"] = writableCheck{Error: "HOME is not set"}
	}

	status, err := readProcStatus()
	if err != nil {
		id.Errors = append(id.Errors, err.Error())
	}
	id.CapEff, id.NoNewPrivs, id.Seccomp = status["CapEff"], status["NoNewPrivs"], status["Seccomp"]
	return id
}

func envNames() []string {
	names := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// checkWritable creates and removes a temporary file in dir.
func checkWritable(dir string) writableCheck {
	c := writableCheck{Path: dir}
	f, err := os.CreateTemp(dir, ".berth-probe-*")
	if err != nil {
		c.Error, c.Reason = err.Error(), reason(err)
		return c
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		c.Error, c.Reason = "created but could not remove "+name+": "+err.Error(), reason(err)
		return c
	}
	c.OK = true
	return c
}

// readIDMap parses a user-namespace map: lines of "inside outside count".
func readIDMap(path string) ([][3]uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := [][3]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s: unexpected line %q", path, line)
		}
		var entry [3]uint64
		for i, f := range fields {
			if entry[i], err = strconv.ParseUint(f, 10, 64); err != nil {
				return nil, fmt.Errorf("%s: unexpected line %q", path, line)
			}
		}
		out = append(out, entry)
	}
	return out, nil
}

// readProcStatus returns the "Key:\tvalue" pairs of /proc/self/status.
func readProcStatus() (map[string]string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return map[string]string{}, err
	}
	defer f.Close()
	fields := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return fields, errors.New("/proc/self/status: " + err.Error())
	}
	return fields, nil
}
