package tests

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoak serves nginx a long load on our kernel and checks that the
// kernel gives back what the load took: resident RAM, the Go heap,
// goroutines and open descriptions come back near their level before it
// (the kernel prints them with stats=1). It runs with `make soak`
// (JIEGE_SOAK=1; JIEGE_SOAK_REQUESTS, 100,000 by default), not in make test.
func TestSoak(t *testing.T) {
	if os.Getenv("JIEGE_SOAK") == "" {
		t.Skip("a long test: make soak runs it")
	}
	requests := 100000
	if s := os.Getenv("JIEGE_SOAK_REQUESTS"); s != "" {
		requests, _ = strconv.Atoi(s)
	}
	initrd, _ := oursRootfs(t)
	port, console, _ := startKernelExit(t, 3*time.Hour, "512M", "stats=1", initrd, 80)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	waitServing(t, client, url, console)
	time.Sleep(3 * time.Second)
	before := lastStats(t, console)

	// Keep-alive requests over 16 connections.
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sent.Add(1) <= int64(requests) {
				resp, err := client.Get(url)
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests in %v, %d failed", requests, time.Since(start).Round(time.Second), failed.Load())
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed", failed.Load(), requests)
	}
	during := lastStats(t, console)

	// 1,000 connections held open at once, then closed.
	var conns []net.Conn
	for i := 0; i < 1000; i++ {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 20*time.Second)
		if err != nil {
			t.Errorf("connection %d: %v", i, err)
			break
		}
		conns = append(conns, c)
	}
	held := len(conns)
	time.Sleep(3 * time.Second)
	for _, c := range conns {
		c.Close()
	}
	client.CloseIdleConnections()
	time.Sleep(20 * time.Second) // nginx and the stack time their connections out
	after := lastStats(t, console)
	t.Logf("held %d connections at once\nbefore: %s\nduring: %s\nafter:  %s", held, before.line, during.line, after.line)
	for _, k := range []struct {
		name   string
		margin int
	}{{"goroutines", 8}, {"descriptions", 4}, {"processes", 0}} {
		if after.v[k.name] > before.v[k.name]+k.margin {
			t.Errorf("%s: %d after the load, %d before (margin %d)", k.name, after.v[k.name], before.v[k.name], k.margin)
		}
	}
	if after.v["resident"] > before.v["resident"]+16<<10 {
		t.Errorf("resident memory: %d KiB after the load, %d KiB before (margin 16 MiB)", after.v["resident"], before.v["resident"])
	}
	// The server still answers.
	if resp, err := client.Get(url); err != nil || resp.StatusCode != 200 {
		t.Errorf("after the soak: %v", err)
	}
}

func waitServing(t *testing.T, client *http.Client, url string, console *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from nginx: %v\nconsole:\n%s", err, console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type stats struct {
	line string
	v    map[string]int
}

var statsLine = regexp.MustCompile(`stats: (\d+) KiB resident .*; heap (\d+) KiB; goroutines (\d+); processes (\d+); descriptions (\d+)`)

// lastStats returns the kernel's last stats line.
func lastStats(t *testing.T, console *syncBuffer) stats {
	t.Helper()
	m := statsLine.FindAllStringSubmatch(console.String(), -1)
	if len(m) == 0 {
		t.Fatalf("no stats line on the console:\n%s", console.String())
	}
	last := m[len(m)-1]
	v := map[string]int{}
	for i, k := range []string{"resident", "heap", "goroutines", "processes", "descriptions"} {
		v[k], _ = strconv.Atoi(last[i+1])
	}
	return stats{line: strings.TrimSpace(last[0]), v: v}
}
