package probe

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ExplainTimeout bounds Explain.
const ExplainTimeout = 10 * time.Second

// Explain says in plain words how the server at addr differs from a
// stock nginx configured as jiege's root filesystem configures it: keep-alive
// off (it answers "Connection: close"), server_tokens off, another nginx
// version, another server, gzip on, HTTP/1.0 answers. It makes two requests
// on one connection and returns one phrase per difference, none when it
// sees none of these, so that a failed fingerprint can tell "not nginx"
// from "nginx with another configuration".
func Explain(ctx context.Context, addr, wantVersion string) []string {
	ctx, cancel := context.WithTimeout(ctx, ExplainTimeout)
	defer cancel()
	c, err := dial(ctx, addr)
	if err != nil {
		return nil
	}
	defer c.Close()
	r, err := c.do("GET", "/", "Accept-Encoding: gzip\r\n", nil)
	if err != nil {
		return nil
	}
	var says []string
	server, hasServer := r.Get("Server")
	switch {
	case !hasServer:
		says = append(says, "no Server header")
	case server == "nginx":
		says = append(says, "it answers `Server: nginx` without a version (nginx with server_tokens off)")
	case strings.HasPrefix(server, "nginx/"):
		if v := strings.TrimPrefix(server, "nginx/"); wantVersion != "" && v != wantVersion {
			says = append(says, fmt.Sprintf("it is nginx %s, not the root filesystem's nginx %s", v, wantVersion))
		}
	default:
		says = append(says, fmt.Sprintf("it is not nginx: `Server: %s`", server))
	}
	if r.Proto != "HTTP/1.1" {
		says = append(says, fmt.Sprintf("it answers an HTTP/1.1 request with %s", r.Proto))
	}
	if ce, _ := r.Get("Content-Encoding"); ce != "" {
		says = append(says, fmt.Sprintf("it sends `/` with `Content-Encoding: %s` when asked (compression on, e.g. nginx's gzip on)", ce))
	}
	conn, _ := r.Get("Connection")
	switch {
	case strings.EqualFold(conn, "close"):
		says = append(says, "keep-alive is off: it answers a keep-alive HTTP/1.1 request with `Connection: close` (nginx with keepalive_timeout 0)")
	default:
		if _, err := c.do("GET", "/", "", nil); err != nil {
			says = append(says, fmt.Sprintf("it answered `Connection: %s` but the second request on the connection failed (%v)", conn, err))
		}
	}
	return says
}
