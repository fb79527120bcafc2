//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a server process started by the benchmark, in its own process
// group so that stopping it also stops its children (nginx's workers).
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // set when done is closed
}

// startProc starts bin with args; its output goes to logPath.
func startProc(name, logPath, dir string, bin string, args ...string) (*proc, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	// Pdeathsig: should the benchmark die, its servers die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// exited says whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		if p.err == nil {
			return true, errors.New("exited")
		}
		return true, p.err
	default:
		return false, nil
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after 5 s.
func (p *proc) stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Workers left behind by a master that died first.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// logTail is the end of the process's output, for error messages.
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.log)
	b = bytes.TrimSpace(b)
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return strings.ReplaceAll(string(b), "\n", " | ")
}

// pids is the process and all its descendants (nginx's workers, anything a
// node program forks).
func (p *proc) pids() []int {
	root := p.cmd.Process.Pid
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		for pid, pp := range parent {
			if pp == tree[i] {
				tree = append(tree, pid)
			}
		}
	}
	return tree
}

// memory sums a /proc/<pid>/status field (VmRSS, VmHWM) over the process
// tree, in bytes.
func (p *proc) memory(field string) int64 {
	return memoryOf(p.pids(), field)
}

func memoryOf(pids []int, field string) int64 {
	var total int64
	for _, pid := range pids {
		total += statusKB(pid, field) * 1024
	}
	return total
}

func statusKB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// resetPeak sets VmHWM back to the current RSS (writing 5 to clear_refs,
// Linux ≥ 4.0), so the peak read after a query is that query's. It reports
// whether that worked; without it VmHWM is the peak since the start.
func (p *proc) resetPeak() bool {
	ok := true
	for _, pid := range p.pids() {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			ok = false
		}
	}
	return ok
}

// rssSampler samples the tree's VmRSS every 50 ms until stopped, keeping
// the largest.
type rssSampler struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	max   int64
}

func sampleRSS(p *proc) *rssSampler {
	s := &rssSampler{stopc: make(chan struct{})}
	pids := p.pids() // once: reading all of /proc every 50 ms would cost CPU the servers need
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			s.max = max(s.max, memoryOf(pids, "VmRSS"))
			select {
			case <-s.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends sampling and returns the largest RSS seen.
func (s *rssSampler) stop() int64 {
	close(s.stopc)
	s.wg.Wait()
	return s.max
}

// cpuSnapshot is CPU time used so far, in clock ticks (1/100 s): by the
// whole machine, by the server's processes and by this program (the load
// generator), and the machine's time waiting on the disk.
type cpuSnapshot struct {
	at                          time.Time
	pids                        []int
	machine, iowait, server, me int64
}

const clockTicks = 100 // USER_HZ, the unit of /proc's CPU times on Linux

func takeCPU(pids []int) cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), pids: pids, server: procTicks(pids...), me: procTicks(os.Getpid())}
	s.machine, s.iowait = machineTicks()
	return s
}

// cpuUse is CPU time over an interval, in cores.
type cpuUse struct {
	server, me float64
	others     float64 // everything else on the machine: work competing with the measurement
	iowait     float64 // time the machine's CPUs sat waiting on the disk
}

func (s cpuSnapshot) since() cpuUse {
	now := takeCPU(s.pids)
	ticks := now.at.Sub(s.at).Seconds() * clockTicks
	if ticks <= 0 {
		return cpuUse{}
	}
	srv, self := float64(now.server-s.server), float64(now.me-s.me)
	other := float64(now.machine-s.machine) - srv - self
	return cpuUse{server: srv / ticks, me: self / ticks, others: max(other, 0) / ticks,
		iowait: float64(now.iowait-s.iowait) / ticks}
}

// machineTicks reads /proc/stat's cpu line: busy is user, nice, system and
// steal; left out are idle, iowait (returned apart), and irq and softirq,
// which here are mostly the loopback traffic of the measurement itself.
func machineTicks() (busy, iowait int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch i {
		case 0, 1, 2, 7: // user, nice, system, steal; guest times are already in user
			busy += n
		case 4:
			iowait = n
		}
	}
	return busy, iowait
}

// procTicks sums utime and stime of the processes.
func procTicks(pids ...int) int64 {
	var total int64
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			total += u + s
		}
	}
	return total
}
