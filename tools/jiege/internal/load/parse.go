package load

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
)

// bufReader parses HTTP/1.1 responses from a connection without allocating.
type bufReader struct {
	*bufio.Reader
}

func newBufReader(size int) *bufReader {
	return &bufReader{bufio.NewReaderSize(nil, size)}
}

func (b *bufReader) reset(c net.Conn) { b.Reset(c) }

// respHead is what the generator needs from a response's head.
type respHead struct {
	status  int
	length  int64 // -1 when absent
	chunked bool
	close   bool
}

// line reads one CRLF- or LF-terminated line without its terminator; the
// slice is valid until the next read.
func (b *bufReader) line(what string) ([]byte, error) {
	l, err := b.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fail(classBadResponse, "%s: line too long", what)
		}
		return nil, ioFail(err, what)
	}
	l = l[:len(l)-1]
	if len(l) > 0 && l[len(l)-1] == '\r' {
		l = l[:len(l)-1]
	}
	return l, nil
}

var (
	hdrContentLength    = []byte("content-length")
	hdrTransferEncoding = []byte("transfer-encoding")
	hdrConnection       = []byte("connection")
)

// readHead reads a status line and headers.
func (b *bufReader) readHead() (respHead, error) {
	h := respHead{length: -1}
	l, err := b.line("status line")
	if err != nil {
		return h, err
	}
	// "HTTP/1.1 200 OK"
	if len(l) < 12 || !bytes.HasPrefix(l, []byte("HTTP/1.")) || l[8] != ' ' {
		return h, fail(classBadResponse, "bad status line %q", trunc(l))
	}
	for _, c := range l[9:12] {
		if c < '0' || c > '9' {
			return h, fail(classBadResponse, "bad status line %q", trunc(l))
		}
		h.status = h.status*10 + int(c-'0')
	}
	if l[7] == '0' {
		h.close = true // HTTP/1.0 without keep-alive negotiation
	}
	for {
		l, err := b.line("header")
		if err != nil {
			return h, err
		}
		if len(l) == 0 {
			return h, nil
		}
		colon := bytes.IndexByte(l, ':')
		if colon <= 0 {
			return h, fail(classBadResponse, "bad header line %q", trunc(l))
		}
		name, value := l[:colon], bytes.TrimSpace(l[colon+1:])
		switch {
		case bytes.EqualFold(name, hdrContentLength):
			n, ok := parseUint(value)
			if !ok {
				return h, fail(classBadResponse, "bad Content-Length %q", trunc(value))
			}
			h.length = n
		case bytes.EqualFold(name, hdrTransferEncoding):
			h.chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, hdrConnection):
			if bytes.EqualFold(value, []byte("close")) {
				h.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				h.close = false
			}
		}
	}
}

func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(b []byte) (int64, bool) {
	if i := bytes.IndexByte(b, ';'); i >= 0 {
		b = b[:i] // chunk extensions
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

func trunc(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// discard skips n body bytes.
func (b *bufReader) discard(n int64) error {
	for n > 0 {
		k := int(min(n, 1<<30))
		d, err := b.Discard(k)
		n -= int64(d)
		if err != nil {
			return ioFail(err, "body")
		}
	}
	return nil
}

// readN passes n body bytes to consume, in pieces no larger than buf.
func (b *bufReader) readN(n int64, consume func([]byte), buf []byte) error {
	for n > 0 {
		p := buf
		if int64(len(p)) > n {
			p = p[:n]
		}
		k, err := b.Read(p)
		consume(p[:k])
		n -= int64(k)
		if err != nil && n > 0 {
			return ioFail(err, "body")
		}
	}
	return nil
}

// readToEOF passes the rest of the stream to consume.
func (b *bufReader) readToEOF(consume func([]byte), buf []byte) error {
	for {
		k, err := b.Read(buf)
		consume(buf[:k])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return ioFail(err, "body")
		}
	}
}

// readChunked decodes a chunked body and skips its trailers.
func (b *bufReader) readChunked(consume func([]byte), buf []byte) error {
	for {
		l, err := b.line("chunk size")
		if err != nil {
			return err
		}
		n, ok := parseHex(l)
		if !ok {
			return fail(classBadResponse, "bad chunk size %q", trunc(l))
		}
		if n == 0 {
			for {
				l, err := b.line("trailer")
				if err != nil {
					return err
				}
				if len(l) == 0 {
					return nil
				}
			}
		}
		if err := b.readN(n, consume, buf); err != nil {
			return err
		}
		l, err = b.line("chunk end")
		if err != nil {
			return err
		}
		if len(l) != 0 {
			return fail(classBadResponse, "chunk longer than its size")
		}
	}
}

// discardUntilEOF reads and drops whatever arrives until EOF or an error.
func (b *bufReader) discardUntilEOF() {
	for {
		if _, err := b.Discard(b.Buffered() + 1); err != nil {
			return
		}
	}
}
