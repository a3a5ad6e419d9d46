package probe

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Answer is what a server did with one request, normalised for comparison.
type Answer struct {
	// Err, when set, says why there is no response: the connection was
	// closed, timed out, or the bytes were not HTTP; "unanswered" when the
	// server had already closed the connection after an earlier answer.
	Err     string
	Interim []int // 1xx statuses before the response
	Proto   string
	Status  int
	Headers []header
	Body    []byte
}

// Why an Answer has no response.
const (
	errClosed     = "connection closed without an answer"
	errTimeout    = "no answer before the timeout"
	errUnanswered = "unanswered: the connection was closed after an earlier answer"
	errConnect    = "connect failed"
)

// normaliser rewrites only what must differ between two honest nginx
// servers: the Date, the port in absolute redirects (the guest listens on
// 80, the oracle elsewhere), the multipart boundary (a counter in each
// nginx), and, when the target may run another nginx version than the
// oracle, that version in Server and in nginx's own pages.
type normaliser struct {
	anyVersion bool
}

var (
	serverVersionRE = regexp.MustCompile(`^nginx/[0-9]+\.[0-9]+\.[0-9]+$`)
	pageVersionRE   = regexp.MustCompile(`<hr><center>nginx/[0-9]+\.[0-9]+\.[0-9]+</center>`)
	locationPortRE  = regexp.MustCompile(`^(https?://[^/:]+):[0-9]+`)
	boundaryRE      = regexp.MustCompile(`boundary=([0-9A-Za-z]+)`)
)

const (
	normDate     = "(date)"
	normVersion  = "nginx/(version)"
	normBoundary = "(boundary)"
)

// answer normalises a parsed response with its interim statuses.
func (n normaliser) answer(r *response, interim []int) Answer {
	a := Answer{Interim: interim, Proto: r.Proto, Status: r.Status, Body: r.Body}
	a.Headers = make([]header, len(r.Headers))
	copy(a.Headers, r.Headers)
	bodyChanged := false
	for i := range a.Headers {
		h := &a.Headers[i]
		switch strings.ToLower(h.Name) {
		case "date":
			h.Value = normDate
		case "server":
			if n.anyVersion && serverVersionRE.MatchString(h.Value) {
				h.Value = normVersion
			}
		case "location":
			h.Value = locationPortRE.ReplaceAllString(h.Value, "$1")
		case "content-type":
			if m := boundaryRE.FindStringSubmatch(h.Value); m != nil && strings.HasPrefix(h.Value, "multipart/") {
				h.Value = strings.Replace(h.Value, m[0], "boundary="+normBoundary, 1)
				a.Body = bytes.ReplaceAll(a.Body, []byte("--"+m[1]), []byte("--"+normBoundary))
				bodyChanged = true
			}
		}
	}
	if n.anyVersion && pageVersionRE.Match(a.Body) {
		a.Body = pageVersionRE.ReplaceAll(a.Body, []byte("<hr><center>"+normVersion+"</center>"))
		bodyChanged = true
	}
	if bodyChanged {
		// The normalised body's length stands for the original one,
		// which differed only by the parts rewritten.
		for i := range a.Headers {
			if strings.EqualFold(a.Headers[i].Name, "Content-Length") && r.Body != nil {
				a.Headers[i].Value = strconv.Itoa(len(a.Body))
			}
		}
	}
	return a
}

// get returns the first value of the named header.
func (a Answer) get(name string) (string, bool) {
	for _, h := range a.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value, true
		}
	}
	return "", false
}

// nginxPage reports whether the body is one of nginx's own pages (error
// pages and redirects carry its signature line).
func nginxPage(body []byte) bool {
	return bytes.Contains(body, []byte("<hr><center>nginx"))
}

// Summary describes the answer in one line, for reports.
func (a Answer) Summary() string {
	if a.Err != "" {
		return a.Err
	}
	var s strings.Builder
	for _, c := range a.Interim {
		fmt.Fprintf(&s, "%d, then ", c)
	}
	fmt.Fprintf(&s, "%s %d", a.Proto, a.Status)
	var hs []string
	for _, h := range a.Headers {
		if n := strings.ToLower(h.Name); n != "date" && n != "server" {
			hs = append(hs, h.Name+": "+trunc(h.Value))
		}
	}
	if len(hs) > 0 {
		s.WriteString(" [" + strings.Join(hs, "; ") + "]")
	}
	if len(a.Body) > 0 {
		fmt.Fprintf(&s, " body %d bytes %q", len(a.Body), truncN(string(a.Body), 60))
	}
	return s.String()
}

func truncN(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// diff returns how got differs from want, or "" when they agree. With
// full unset (a path of an attempt's own tree that the oracle does not
// hold) only the status and nginx's own pages are compared.
func diff(got, want Answer, full bool) string {
	if got.Err != want.Err {
		return fmt.Sprintf("target: %s; oracle: %s", orAnswer(got.Err), orAnswer(want.Err))
	}
	if got.Err != "" {
		return ""
	}
	if fmt.Sprint(got.Interim) != fmt.Sprint(want.Interim) {
		return fmt.Sprintf("interim statuses %v, oracle %v", got.Interim, want.Interim)
	}
	if got.Status != want.Status {
		return fmt.Sprintf("status %d, oracle %d", got.Status, want.Status)
	}
	if !full {
		if nginxPage(want.Body) && !bytes.Equal(got.Body, want.Body) {
			return fmt.Sprintf("nginx's page %q, oracle %q", truncN(string(got.Body), 80), truncN(string(want.Body), 80))
		}
		return ""
	}
	if got.Proto != want.Proto {
		return fmt.Sprintf("protocol %s, oracle %s", got.Proto, want.Proto)
	}
	gn, wn := headerNames(got), headerNames(want)
	if gn != wn {
		return fmt.Sprintf("headers [%s], oracle [%s]", gn, wn)
	}
	for i, h := range got.Headers {
		if w := want.Headers[i]; h.Value != w.Value {
			return fmt.Sprintf("%s %q, oracle %q", h.Name, trunc(h.Value), trunc(w.Value))
		}
	}
	if i := firstDiff(got.Body, want.Body); i >= 0 {
		return fmt.Sprintf("body (%d bytes) differs from the oracle's (%d bytes) at byte %d", len(got.Body), len(want.Body), i)
	}
	return ""
}

func orAnswer(err string) string {
	if err == "" {
		return "an answer"
	}
	return err
}

func headerNames(a Answer) string {
	n := make([]string, len(a.Headers))
	for i, h := range a.Headers {
		n[i] = h.Name
	}
	return strings.Join(n, ", ")
}

// Configuration differences an nginx may have from the oracle's.
const (
	cfgKeepAliveOff = "keep-alive off (Connection: close)"
	cfgGzip         = "gzip on (Content-Encoding: gzip)"
	cfgServerName   = "another server_name or redirect host (Location)"
)

// explain returns the configuration differences that account for got
// differing from want, or nil when the difference is not of that kind.
// closedEarly says the target had closed this connection after an
// earlier answer that the oracle kept open.
func explain(got, want Answer, full, closedEarly bool) []string {
	if got.Err == errUnanswered && closedEarly {
		return []string{cfgKeepAliveOff}
	}
	var why []string
	strip := map[string]bool{}
	if gc, _ := got.get("Connection"); gc == "close" {
		if wc, _ := want.get("Connection"); wc == "keep-alive" {
			why = append(why, cfgKeepAliveOff)
			strip["connection"], strip["keep-alive"] = true, true
		}
	}
	g2, w2 := got, want
	if ge, _ := got.get("Content-Encoding"); ge == "gzip" {
		if _, ok := want.get("Content-Encoding"); !ok {
			why = append(why, cfgGzip)
			// A compressed answer has no length, a weak ETag, and no
			// ranges: nginx answers a Range with the whole of it.
			for _, n := range []string{"content-encoding", "content-length", "transfer-encoding", "vary", "etag", "accept-ranges", "content-range"} {
				strip[n] = true
			}
			g2.Body, w2.Body = nil, nil
			if got.Status == 200 && (want.Status == 206 || want.Status == 416) {
				return why // the Range was ignored, as nginx does when it compresses
			}
		}
	}
	gl, _ := got.get("Location")
	wl, _ := want.get("Location")
	if gl != wl && hostOf(gl) != hostOf(wl) && pathOf(gl) == pathOf(wl) {
		why = append(why, cfgServerName)
		strip["location"] = true
	}
	if len(why) == 0 {
		return nil
	}
	g2.Headers, w2.Headers = without(got.Headers, strip), without(want.Headers, strip)
	if diff(g2, w2, full) != "" {
		return nil
	}
	return why
}

func without(hs []header, names map[string]bool) []header {
	var out []header
	for _, h := range hs {
		if !names[strings.ToLower(h.Name)] {
			out = append(out, h)
		}
	}
	return out
}

func hostOf(loc string) string {
	rest, ok := strings.CutPrefix(loc, "http://")
	if !ok {
		return ""
	}
	h, _, _ := strings.Cut(rest, "/")
	return h
}

func pathOf(loc string) string {
	rest, ok := strings.CutPrefix(loc, "http://")
	if !ok {
		return loc
	}
	_, p, _ := strings.Cut(rest, "/")
	return "/" + p
}
