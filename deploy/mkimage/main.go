// Command mkimage builds the thalweg container image without a container
// daemon or a base image: it compiles a static (CGO_ENABLED=0) thalweg
// binary, puts it in one layer on top of nothing (FROM scratch) together with
// the files a non-root process needs, and writes the image as an OCI image
// layout in a tar archive (what podman, skopeo and crane call an
// "oci-archive"). `make image` runs it; deploy/image_test.go builds an image
// with it and runs the binary out of the unpacked layer.
//
//	go run ./mkimage -repo .. -o ../bin/thalweg-image.tar
//
// The output depends only on the sources, the version and the build
// machine's CA bundle: every timestamp is SOURCE_DATE_EPOCH (or the Unix
// epoch), so two builds of one commit give the same image digest.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/thalweg/thalweg/deploy/internal/imagespec"
)

// What the image promises (package imagespec): deploy/kubernetes and the
// tests rely on it.
const (
	binaryPath = imagespec.BinaryPath
	configPath = imagespec.ConfigPath
	dataDir    = imagespec.DataDir
	uid        = imagespec.UID
	gid        = imagespec.GID
)

var (
	metricsPort = fmt.Sprintf("%d/tcp", imagespec.MetricsPort)
	flightPort  = fmt.Sprintf("%d/tcp", imagespec.FlightPort)
)

func main() {
	repo := flag.String("repo", "..", "root of the thalweg repository (the main module)")
	out := flag.String("o", "bin/thalweg-image.tar", "output: an OCI image layout in a tar archive")
	version := flag.String("version", "", "version baked into the binary and the labels (default: git describe, else dev)")
	arch := flag.String("arch", runtime.GOARCH, "GOARCH of the image")
	caBundle := flag.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt",
		"CA certificates copied to the same path in the image, for TLS to brokers and sinks (\"\" or a missing file: none)")
	flag.Parse()
	if err := run(*repo, *out, *version, *arch, *caBundle); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(repo, out, version, arch, caBundle string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	repo, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	if version == "" {
		version = gitOutput(ctx, repo, "describe", "--tags", "--always", "--dirty")
		if version == "" {
			version = "dev"
		}
	}
	revision := gitOutput(ctx, repo, "rev-parse", "HEAD")
	created := time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
		}
		created = time.Unix(sec, 0).UTC()
	}

	tmp, err := os.MkdirTemp("", "mkimage")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "thalweg")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath",
		"-ldflags", "-s -w -X main.version="+version, "-o", bin, "./cmd/thalweg")
	build.Dir = repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/thalweg: %w", err)
	}

	files := []file{
		{name: "etc/", mode: 0o755 | fs.ModeDir},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			fmt.Sprintf("thalweg:x:%d:%d:thalweg:%s:/sbin/nologin\n", uid, gid, dataDir))},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nthalweg:x:%d:\n", gid))},
		{name: "etc/thalweg/", mode: 0o755 | fs.ModeDir},
		{name: "tmp/", mode: 0o777 | fs.ModeDir | fs.ModeSticky},
		{name: "usr/", mode: 0o755 | fs.ModeDir},
		{name: "usr/local/", mode: 0o755 | fs.ModeDir},
		{name: "usr/local/bin/", mode: 0o755 | fs.ModeDir},
		{name: strings.TrimPrefix(binaryPath, "/"), mode: 0o755, path: bin},
		{name: "var/", mode: 0o755 | fs.ModeDir},
		{name: "var/lib/", mode: 0o755 | fs.ModeDir},
		{name: strings.TrimPrefix(dataDir, "/") + "/", mode: 0o750 | fs.ModeDir, uid: uid, gid: gid},
	}
	if caBundle != "" {
		if _, err := os.Stat(caBundle); err == nil {
			dir := strings.TrimPrefix(filepath.Dir(caBundle), "/")
			for _, d := range parents(dir) {
				files = append(files, file{name: d + "/", mode: 0o755 | fs.ModeDir})
			}
			files = append(files, file{name: strings.TrimPrefix(caBundle, "/"), mode: 0o644, path: caBundle})
		} else {
			fmt.Fprintf(os.Stderr, "mkimage: no CA bundle at %s: TLS needs a ca_file in the config\n", caBundle)
		}
	}
	layerTar, err := layerArchive(files, created)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}

	labels := map[string]string{
		"org.opencontainers.image.title":       "thalweg",
		"org.opencontainers.image.description": "Pulsar -> Arrow -> Flight/Zerobus ingestion worker with ack lanes and a Pebble offset store",
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.source":      "https://github.com/thalweg/thalweg",
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
	if revision != "" {
		labels["org.opencontainers.image.revision"] = revision
	}
	cfg := &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: created},
		Config: v1.Config{
			Entrypoint:   []string{binaryPath},
			Cmd:          []string{"run", "--config", configPath},
			Env:          []string{"PATH=/usr/local/bin", "HOME=" + dataDir},
			User:         fmt.Sprintf("%d:%d", uid, gid),
			WorkingDir:   dataDir,
			ExposedPorts: map[string]struct{}{metricsPort: {}, flightPort: {}},
			Volumes:      map[string]struct{}{dataDir: {}},
			Labels:       labels,
			// The worker drains on SIGTERM (shutdown.drain_timeout).
			StopSignal: "SIGTERM",
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), cfg)
	if err != nil {
		return err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "mkimage: thalweg " + version, Comment: "static binary, FROM scratch"},
	})
	if err != nil {
		return err
	}

	dir := filepath.Join(tmp, "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": version,
	})); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := tarDir(dir, out, created); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s: thalweg %s (%s/%s), manifest %s\n", out, version, "linux", arch, digest)
	return nil
}

// file is one entry of the image's layer: data, or the contents of path.
type file struct {
	name string // relative, "/"-terminated for directories
	mode fs.FileMode
	uid  int
	gid  int
	data []byte
	path string
}

// layerArchive writes files, sorted by name, into an uncompressed tar with
// fixed times and numeric owners, so the layer is reproducible.
func layerArchive(files []file, mtime time.Time) ([]byte, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.name] {
			continue
		}
		seen[f.name] = true
		data := f.data
		if f.path != "" {
			var err error
			if data, err = os.ReadFile(f.path); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Name: f.name, Mode: int64(f.mode.Perm()), Uid: f.uid, Gid: f.gid,
			ModTime: mtime, Format: tar.FormatPAX}
		if f.mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if f.mode.IsDir() {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarDir archives the OCI layout in dir as out (atomically: a temporary file
// renamed into place), entries sorted, times fixed.
func tarDir(dir, out string, mtime time.Time) (err error) {
	var names []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		names = append(names, p)
		return nil
	}); err != nil {
		return err
	}
	sort.Strings(names)
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	tw := tar.NewWriter(f)
	for _, p := range names {
		st, err := os.Stat(p)
		if err != nil {
			return errors.Join(err, f.Close())
		}
		rel, _ := filepath.Rel(dir, p)
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: mtime, Format: tar.FormatPAX}
		if st.IsDir() {
			h.Name += "/"
			h.Mode, h.Typeflag = 0o755, tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, st.Size()
		}
		if err := tw.WriteHeader(h); err != nil {
			return errors.Join(err, f.Close())
		}
		if !st.IsDir() {
			if err := copyFile(tw, p); err != nil {
				return errors.Join(err, f.Close())
			}
		}
	}
	if err := errors.Join(tw.Close(), f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// parents returns dir and each of its ancestors, outermost first
// ("etc/ssl/certs" -> etc, etc/ssl, etc/ssl/certs).
func parents(dir string) []string {
	var out []string
	for i, c := range dir {
		if c == '/' {
			out = append(out, dir[:i])
		}
	}
	return append(out, dir)
}

// gitOutput runs git in repo and returns its trimmed output, or "" when git
// or the repository is not there (a source tarball builds as "dev").
func gitOutput(ctx context.Context, repo string, args ...string) string {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = repo
	b, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
