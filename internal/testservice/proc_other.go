//go:build !linux

package testservice

import (
	"errors"
	"syscall"
)

// procAttr runs a server as the tests do. Elsewhere than on Linux a server
// is not stopped if the test binary dies, and the tests do not run as root.
func procAttr(as *account, _ syscall.Signal) (*syscall.SysProcAttr, error) {
	if as != nil {
		return nil, errors.New("the tests run as root: run them as another user, or set DECOY_TEST_POSTGRES_URL")
	}
	return nil, nil
}
