package testservice

import "syscall"

// procAttr runs a server as as (nil: as the tests), and sends it
// deathSignal if the test binary dies without stopping it (killed by go
// test's timeout, say), so that no server outlives its tests. (Linux sends
// it when the thread that started the server ends; Go ends a thread only
// when a goroutine locked to it exits, which nothing here does.)
func procAttr(as *account, deathSignal syscall.Signal) (*syscall.SysProcAttr, error) {
	a := &syscall.SysProcAttr{Pdeathsig: deathSignal}
	if as != nil {
		a.Credential = &syscall.Credential{Uid: as.uid, Gid: as.gid}
	}
	return a, nil
}
