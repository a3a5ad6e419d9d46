package ownnginx

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxApkScan bounds the directory entries Alpine looks through.
const maxApkScan = 20000

// Alpine names the tree's nginx as Alpine's build when an apk package in
// dir (the attempt's directory) holds the same binary byte for byte; the
// package's .PKGINFO says its name, version and architecture.
func (t *Tree) Alpine(dir string) (string, bool) {
	sum, err := fileSHA256(filepath.Join(t.Dir, t.Nginx))
	if err != nil {
		return "", false
	}
	var apks []string
	seen := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if seen++; seen > maxApkScan {
			return filepath.SkipAll
		}
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".apk") {
			apks = append(apks, p)
		}
		return nil
	})
	for _, apk := range apks {
		info, binSum, err := readApk(apk)
		if err != nil || binSum != sum || info["pkgname"] == "" {
			continue
		}
		rel, _ := filepath.Rel(dir, apk)
		return fmt.Sprintf("the official Alpine build (sha256 %s..., byte for byte the nginx of Alpine's package %s %s (%s), %s in the attempt's directory)",
			sum[:16], info["pkgname"], info["pkgver"], info["arch"], rel), true
	}
	return "", false
}

// readApk reads an apk (gzip streams of one tar: signature, control with
// .PKGINFO, data): the .PKGINFO fields and the sha256 of its
// usr/sbin/nginx.
func readApk(p string) (info map[string]string, nginxSum string, err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, "", err
	}
	info = map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return info, nginxSum, nil
		}
		if err != nil {
			return info, nginxSum, err
		}
		switch strings.TrimPrefix(h.Name, "./") {
		case ".PKGINFO":
			b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			if err != nil {
				return nil, "", err
			}
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, " = "); ok && info[k] == "" {
					info[k] = v
				}
			}
		case "usr/sbin/nginx":
			h := sha256.New()
			if _, err := io.Copy(h, io.LimitReader(tr, maxFile)); err != nil {
				return nil, "", err
			}
			nginxSum = hex.EncodeToString(h.Sum(nil))
		}
	}
}
