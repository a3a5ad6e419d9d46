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

// Configuration deviations from the nginx configuration of jiege's root
// filesystem, as Deviations names them.
const (
	DevKeepAliveOff = "keep-alive off"
	DevGzip         = "gzip on"
	DevServerTokens = "server_tokens off"
	DevErrorPages   = "other error pages"
)

// Deviations names how the configuration of the nginx at addr, a server
// that passed the fingerprint against its own binary and configuration,
// deviates from jiege's: keep-alive off, gzip on, server_tokens off, other
// error pages. Its version is the binary's, not a deviation.
func Deviations(ctx context.Context, addr string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, ExplainTimeout)
	defer cancel()
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer func() { c.Close() }()
	r, err := c.do("GET", "/", "Accept-Encoding: gzip\r\n", nil)
	if err != nil {
		return nil, err
	}
	var devs []string
	if v, _ := r.Get("Connection"); strings.EqualFold(v, "close") {
		devs = append(devs, DevKeepAliveOff)
		c.Close()
		if c, err = dial(ctx, addr); err != nil {
			return nil, err
		}
	}
	if ce, _ := r.Get("Content-Encoding"); ce != "" {
		devs = append(devs, DevGzip)
	}
	server, _ := r.Get("Server")
	version, tokens := strings.CutPrefix(server, "nginx/")
	if server == "nginx" {
		devs = append(devs, DevServerTokens)
	}
	missing, err := c.do("GET", "/jiege-missing-"+randHex(8), "Connection: close\r\n", nil)
	if err != nil {
		return nil, err
	}
	page := NginxErrorPage(version)
	if !tokens {
		page = strings.Replace(NginxErrorPage(""), "nginx/", "nginx", 1)
	}
	if missing.Status != 404 || string(missing.Body) != page {
		devs = append(devs, DevErrorPages)
	}
	return devs, nil
}
