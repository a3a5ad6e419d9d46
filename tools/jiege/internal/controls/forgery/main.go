// Command forgery is the `forgery` negative control: a server of our own,
// not nginx, that answers every probe of jiege's fixed fingerprint exactly
// as nginx does (fakehttp's imitation: nginx's header order, ETag, 404
// page, HEAD, Range, conditional requests, keep-alive) and serves the root
// filesystem's files. Only the random fingerprint requests can catch it.
//
//	forgery [-root DIR] [-listen ADDR] [-nginx PATH | -version V]
//
// It claims the nginx version that `PATH -v` prints, as a forgery that
// knows what jiege expects would.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe/fakehttp"
)

func main() {
	root := flag.String("root", "/var/www/html", "document root")
	listen := flag.String("listen", ":80", "listen address")
	nginx := flag.String("nginx", "/usr/sbin/nginx", "the nginx whose version to claim")
	version := flag.String("version", "", "the nginx version to claim (default: what -nginx says)")
	flag.Parse()
	log.SetPrefix("jiege forgery: ")
	if *version == "" {
		v, err := nginxVersion(*nginx)
		if err != nil {
			log.Fatal(err)
		}
		*version = v
	}
	files, err := load(*root)
	if err != nil {
		log.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(*root, "index.html"))
	if err != nil {
		log.Fatal(err)
	}
	s, err := fakehttp.Start(fakehttp.Options{Addr: *listen, Files: files, Version: *version, ModTime: st.ModTime(), KeepAliveRequests: 1 << 30})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving %d files as nginx/%s on %s", len(files), *version, s.Addr)
	select {}
}

var versionRE = regexp.MustCompile(`nginx/([0-9]+\.[0-9]+\.[0-9]+)`)

func nginxVersion(path string) (string, error) {
	out, err := exec.Command(path, "-v").CombinedOutput()
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s -v: %v: %q", path, err, out)
	}
	return string(m[1]), nil
}

// load reads every file under root, by URL path.
func load(root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files["/"+filepath.ToSlash(rel)] = b
		return nil
	})
	return files, err
}
