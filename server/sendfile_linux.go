package server

import (
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sendFile sends head, then n bytes of f from off, on c: the head with
// MSG_MORE, so that it leaves in the same segments as the start of the
// file, then the file with sendfile(2) at an explicit offset, so that
// requests share f without moving its position. It reports whether it
// could (c is a TCP connection), and the bytes of the file written.
func sendFile(c net.Conn, head []byte, f *os.File, off, n int64) (int64, bool, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false, nil
	}
	conn, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	file, err := f.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var written int64
	var werr, cerr error // of the sends; of waiting on the connection
	end := off + n
	// Control keeps the file's descriptor valid without its read lock,
	// which would let one request at a time send the file.
	rerr := file.Control(func(ffd uintptr) {
		cerr = conn.Write(func(sfd uintptr) bool {
			for len(head) > 0 {
				k, err := unix.SendmsgN(int(sfd), head, nil, nil, unix.MSG_MORE|unix.MSG_NOSIGNAL)
				switch err {
				case nil:
					head = head[k:]
				case unix.EINTR:
				case unix.EAGAIN:
					return false // wait until writable
				default:
					werr = err
					return true
				}
			}
			for off < end {
				k, err := unix.Sendfile(int(sfd), int(ffd), &off, int(min(end-off, 1<<30)))
				written += int64(max(k, 0))
				switch {
				case err == unix.EAGAIN:
					return false
				case err == unix.EINTR:
				case err != nil:
					werr = err
					return true
				case k == 0:
					werr = io.ErrUnexpectedEOF // the file is shorter than its mapping: never, files are not changed
					return true
				}
			}
			return true
		})
	})
	for _, err := range []error{cerr, rerr} {
		if werr == nil {
			werr = err
		}
	}
	return written, true, werr
}
