package load

import (
	"bytes"
	"hash"
)

// respHead is what the generator needs from a response's head.
type respHead struct {
	status  int
	length  int64 // -1 when absent
	chunked bool
	close   bool
}

type parseState int

const (
	stStatus    parseState = iota // status line
	stHeader                      // header lines up to the blank line
	stBody                        // Content-Length body
	stBodyEOF                     // body delimited by the server's close
	stChunkSize                   // chunk-size line
	stChunkData                   // chunk data
	stChunkEnd                    // CRLF after chunk data
	stTrailer                     // trailer lines up to the blank line
	stDone
)

// maxLine bounds a status, header or chunk-size line.
const maxLine = 16 << 10

// respParser parses one HTTP/1.1 response from bytes pushed into it as
// they arrive, without allocating in the steady state. Only 200 responses
// are read to the end: any other status is an error as soon as the head is
// complete.
type respParser struct {
	st   parseState
	line []byte // a line split across reads
	head respHead
	left int64 // bytes left of the body or chunk
	n    int64 // body bytes seen
	got  bool  // any byte seen

	sha  hash.Hash // when set, the body is hashed
	keep bool      // when set, the body is kept in body
	body []byte
}

func (p *respParser) reset(sha hash.Hash, keep bool) {
	p.st, p.line, p.head = stStatus, p.line[:0], respHead{length: -1}
	p.left, p.n, p.got = 0, 0, false
	p.sha, p.keep, p.body = sha, keep, p.body[:0]
	if sha != nil {
		sha.Reset()
	}
}

func (p *respParser) done() bool { return p.st == stDone }

func (p *respParser) consume(b []byte) {
	p.n += int64(len(b))
	if p.sha != nil {
		p.sha.Write(b)
	}
	if p.keep {
		p.body = append(p.body, b...)
	}
}

// feed consumes bytes of b and returns how many it used; it stops at the
// end of the response, leaving any further bytes unused.
func (p *respParser) feed(b []byte) (int, error) {
	used := 0
	if len(b) > 0 {
		p.got = true
	}
	for used < len(b) && p.st != stDone {
		switch p.st {
		case stBody, stChunkData:
			k := min(int64(len(b)-used), p.left)
			p.consume(b[used : used+int(k)])
			used += int(k)
			p.left -= k
			if p.left == 0 {
				if p.st == stBody {
					p.st = stDone
				} else {
					p.st = stChunkEnd
				}
			}
		case stBodyEOF:
			p.consume(b[used:])
			used = len(b)
		default:
			i := bytes.IndexByte(b[used:], '\n')
			if i < 0 {
				if len(p.line)+len(b)-used > maxLine {
					return used, fail(classBadResponse, "line over %d bytes", maxLine)
				}
				p.line = append(p.line, b[used:]...)
				used = len(b)
				continue
			}
			line := b[used : used+i]
			if len(p.line) > 0 {
				p.line = append(p.line, line...)
				line = p.line
			}
			used += i + 1
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			err := p.onLine(line)
			p.line = p.line[:0]
			if err != nil {
				return used, err
			}
		}
	}
	return used, nil
}

var (
	hdrContentLength    = []byte("content-length")
	hdrTransferEncoding = []byte("transfer-encoding")
	hdrConnection       = []byte("connection")
)

func (p *respParser) onLine(l []byte) error {
	switch p.st {
	case stStatus:
		// "HTTP/1.1 200 OK"
		if len(l) < 12 || !bytes.HasPrefix(l, []byte("HTTP/1.")) || l[8] != ' ' {
			return fail(classBadResponse, "bad status line %q", trunc(l))
		}
		for _, c := range l[9:12] {
			if c < '0' || c > '9' {
				return fail(classBadResponse, "bad status line %q", trunc(l))
			}
			p.head.status = p.head.status*10 + int(c-'0')
		}
		p.head.close = l[7] == '0' // HTTP/1.0 closes unless told otherwise
		p.st = stHeader
	case stHeader:
		if len(l) == 0 {
			return p.endHead()
		}
		colon := bytes.IndexByte(l, ':')
		if colon <= 0 {
			return fail(classBadResponse, "bad header line %q", trunc(l))
		}
		name := l[:colon]
		// Only three headers matter; most lines are rejected by length.
		if len(name) != len(hdrContentLength) && len(name) != len(hdrTransferEncoding) && len(name) != len(hdrConnection) {
			return nil
		}
		value := bytes.TrimSpace(l[colon+1:])
		switch {
		case bytes.EqualFold(name, hdrContentLength):
			n, ok := parseUint(value)
			if !ok {
				return fail(classBadResponse, "bad Content-Length %q", trunc(value))
			}
			p.head.length = n
		case bytes.EqualFold(name, hdrTransferEncoding):
			p.head.chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, hdrConnection):
			if bytes.EqualFold(value, []byte("close")) {
				p.head.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				p.head.close = false
			}
		}
	case stChunkSize:
		n, ok := parseHex(l)
		if !ok {
			return fail(classBadResponse, "bad chunk size %q", trunc(l))
		}
		if n == 0 {
			p.st = stTrailer
		} else {
			p.left, p.st = n, stChunkData
		}
	case stChunkEnd:
		if len(l) != 0 {
			return fail(classBadResponse, "chunk longer than its size")
		}
		p.st = stChunkSize
	case stTrailer:
		if len(l) == 0 {
			p.st = stDone
		}
	}
	return nil
}

func (p *respParser) endHead() error {
	if p.head.status != 200 {
		return fail(classBadStatus, "status %d", p.head.status)
	}
	switch {
	case p.head.chunked:
		p.st = stChunkSize
	case p.head.length == 0:
		p.st = stDone
	case p.head.length > 0:
		p.left, p.st = p.head.length, stBody
	default:
		p.st, p.head.close = stBodyEOF, true
	}
	return nil
}

// eof tells the parser that the server closed the connection.
func (p *respParser) eof() error {
	switch {
	case p.st == stBodyEOF:
		p.st = stDone
		return nil
	case !p.got:
		return fail(classReset, "connection closed before the response")
	}
	return fail(classReset, "connection closed mid-response")
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
