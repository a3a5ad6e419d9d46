package kprof

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// QMP is a connection to a QEMU's machine protocol socket (-qmp unix:PATH).
type QMP struct {
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration
}

// DialQMP connects to the socket, waiting up to timeout for QEMU to make
// it, and leaves capability negotiation done.
func DialQMP(socket string, timeout time.Duration) (*QMP, error) {
	deadline := time.Now().Add(timeout)
	var conn net.Conn
	var err error
	for {
		if conn, err = net.DialTimeout("unix", socket, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("qmp: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	q := &QMP{conn: conn, r: bufio.NewReader(conn), timeout: timeout}
	if _, err := q.reply(); err != nil { // the greeting
		conn.Close()
		return nil, err
	}
	if _, err := q.Execute("qmp_capabilities", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return q, nil
}

// Close closes the connection.
func (q *QMP) Close() error { return q.conn.Close() }

// Execute runs a command and returns its result.
func (q *QMP) Execute(cmd string, args any) (json.RawMessage, error) {
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	q.conn.SetDeadline(time.Now().Add(q.timeout))
	if _, err := q.conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("qmp %s: %v", cmd, err)
	}
	res, err := q.reply()
	if err != nil {
		return nil, fmt.Errorf("qmp %s: %v", cmd, err)
	}
	return res, nil
}

// reply reads messages up to the next one that is not an event.
func (q *QMP) reply() (json.RawMessage, error) {
	q.conn.SetDeadline(time.Now().Add(q.timeout))
	for {
		line, err := q.r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var msg struct {
			Return json.RawMessage `json:"return"`
			QMP    json.RawMessage `json:"QMP"`
			Event  string          `json:"event"`
			Error  *struct {
				Class string `json:"class"`
				Desc  string `json:"desc"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return nil, fmt.Errorf("bad reply %q: %v", line, err)
		}
		switch {
		case msg.Error != nil:
			return nil, fmt.Errorf("%s: %s", msg.Error.Class, msg.Error.Desc)
		case msg.Event != "":
			continue
		case msg.QMP != nil:
			return msg.QMP, nil
		default:
			return msg.Return, nil
		}
	}
}

// ReadPhys reads size bytes of guest physical memory at addr (pmemsave
// through a file in dir).
func (q *QMP) ReadPhys(addr, size uint64, dir string) ([]byte, error) {
	f, err := os.CreateTemp(dir, "pmem-*.bin")
	if err != nil {
		return nil, err
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	if _, err := q.Execute("pmemsave", map[string]any{"val": addr, "size": size, "filename": abs}); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) != size {
		return nil, fmt.Errorf("pmemsave wrote %d bytes, want %d", len(b), size)
	}
	return b, nil
}
