package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/thalweg/thalweg/deploy/internal/imagespec"
)

const manifestDir = "kubernetes"

// object is one decoded manifest document.
type object struct {
	file string
	obj  any // *corev1.ConfigMap, *corev1.Service, *appsv1.StatefulSet, *appsv1.Deployment
}

// decodeStrict decodes every document of a manifest into its Kubernetes API
// type: duplicate keys, unknown fields, trailing data and unknown kinds are
// errors, as `kubectl apply --validate=strict` would make them.
func decodeStrict(name string, r io.Reader) ([]any, error) {
	var out []any
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for i := 1; ; i++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue // only comments
		}
		var tm struct{ APIVersion, Kind string }
		if err := json.Unmarshal(js, &tm); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		var obj any
		switch tm.APIVersion + "/" + tm.Kind {
		case "v1/ConfigMap":
			obj = &corev1.ConfigMap{}
		case "v1/Service":
			obj = &corev1.Service{}
		case "v1/Secret":
			obj = &corev1.Secret{}
		case "apps/v1/StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "apps/v1/Deployment":
			obj = &appsv1.Deployment{}
		default:
			return nil, fmt.Errorf("%s: document %d: apiVersion %q kind %q: not a type this test knows", name, i, tm.APIVersion, tm.Kind)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(obj); err != nil {
			return nil, fmt.Errorf("%s: document %d (%s): %w", name, i, tm.Kind, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s: document %d: trailing data", name, i)
		}
		out = append(out, obj)
	}
}

func loadManifests(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifestDir, err)
	}
	var out []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeStrict(f, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			out = append(out, object{f, o})
		}
	}
	return out
}

// The strict decoder is what makes the manifest checks worth anything: a
// misspelt field must fail, not vanish.
func TestDecodeStrictRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":  "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  selectr: {a: b}\n",
		"nested unknown": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          livenesProbe: {}\n",
		"duplicate key":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nmetadata: {name: y}\n",
		"wrong type":     "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: {port: 1}\n",
		"unknown kind":   "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
	} {
		if _, err := decodeStrict(name, strings.NewReader(doc)); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

type cluster struct {
	configMaps   map[string]*corev1.ConfigMap
	services     map[string]*corev1.Service
	statefulSets map[string]*appsv1.StatefulSet
	// A Deployment is a worker whose offset store may be lost: only one
	// whose raw anchor rebuilds it (TestIcebergWorkersManifest).
	deployments map[string]*appsv1.Deployment
	secrets     map[string]*corev1.Secret
}

func index(t *testing.T, objs []object) cluster {
	t.Helper()
	c := cluster{map[string]*corev1.ConfigMap{}, map[string]*corev1.Service{}, map[string]*appsv1.StatefulSet{},
		map[string]*appsv1.Deployment{}, map[string]*corev1.Secret{}}
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *corev1.ConfigMap:
			c.configMaps[v.Name] = v
		case *corev1.Service:
			c.services[v.Name] = v
		case *appsv1.StatefulSet:
			c.statefulSets[v.Name] = v
		case *appsv1.Deployment:
			c.deployments[v.Name] = v
		case *corev1.Secret:
			c.secrets[v.Name] = v
		}
	}
	return c
}

// thalwegBinary builds cmd/thalweg once per test run, with the image's
// build settings (CGO_ENABLED=0, -trimpath) so that it shares the build
// cache with TestImage and `make image`.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	// The tests start goroutines that read the processes' output.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func thalweg(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "thalweg-deploy-test")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "thalweg")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", binPath, "./cmd/thalweg")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/thalweg: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// acceptsArgs reports whether thalweg parses args: with --help appended, a
// command whose every flag is known prints its usage and exits 0, and an
// unknown or malformed flag exits 2 before --help is reached.
func acceptsArgs(t *testing.T, args []string) (bool, string) {
	t.Helper()
	cmd := exec.Command(thalweg(t), append(slices.Clone(args), "--help")...)
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

func container(t *testing.T, sts *appsv1.StatefulSet, name string) *corev1.Container {
	t.Helper()
	for i := range sts.Spec.Template.Spec.Containers {
		if c := &sts.Spec.Template.Spec.Containers[i]; c.Name == name {
			return c
		}
	}
	t.Fatalf("StatefulSet %s has no container %q", sts.Name, name)
	return nil
}

// containerPort resolves a probe's or Service's port (a number or a port
// name) against the container.
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, p.StrVal)
	return 0
}

func flagValue(t *testing.T, args []string, name string) string {
	t.Helper()
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	t.Fatalf("args %q have no %s", args, name)
	return ""
}

func portOf(t *testing.T, hostport string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("%q: %v", hostport, err)
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		t.Fatalf("%q: %v", hostport, err)
	}
	return int32(n)
}

// persistentMount returns the mount path of the volumeClaimTemplate that
// holds dir, failing when dir is on no persistent volume.
func persistentMount(t *testing.T, sts *appsv1.StatefulSet, c *corev1.Container, dir string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if dir != vm.MountPath && !strings.HasPrefix(dir, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			continue
		}
		for _, pvc := range sts.Spec.VolumeClaimTemplates {
			if pvc.Name == vm.Name {
				if vm.ReadOnly {
					t.Errorf("%s: volume %s holding %s is mounted read-only", sts.Name, vm.Name, dir)
				}
				return vm.MountPath
			}
		}
	}
	t.Fatalf("%s: %s is on no volumeClaimTemplate's mount: its data would not survive a restart", sts.Name, dir)
	return ""
}

// checkPodBasics holds what every thalweg pod needs: the image, the image's
// non-root user, selectors that match, a governing Service.
func checkPodBasics(t *testing.T, cl cluster, sts *appsv1.StatefulSet, c *corev1.Container) {
	t.Helper()
	if !strings.Contains(path.Base(c.Image), "thalweg") {
		t.Errorf("%s: image %q is not the thalweg image", sts.Name, c.Image)
	}
	if len(c.Command) != 0 {
		t.Errorf("%s: command %q overrides the image's entrypoint", sts.Name, c.Command)
	}
	psc := sts.Spec.Template.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil ||
		*psc.RunAsUser != imagespec.UID || psc.FSGroup == nil || *psc.FSGroup != imagespec.GID {
		t.Errorf("%s: pod securityContext %+v, want runAsNonRoot with the image's user %d and fsGroup %d (the volume must be writable)",
			sts.Name, psc, imagespec.UID, imagespec.GID)
	}
	if sts.Spec.Selector == nil {
		t.Fatalf("%s: no selector", sts.Name)
	}
	for k, v := range sts.Spec.Selector.MatchLabels {
		if sts.Spec.Template.Labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pod template's labels", sts.Name, k, v)
		}
	}
	if _, ok := cl.services[sts.Spec.ServiceName]; !ok {
		t.Errorf("%s: serviceName %q names no Service", sts.Name, sts.Spec.ServiceName)
	}
}

// thalwegPod returns StatefulSet name and its container, after checking the
// pod basics and that the container runs `thalweg command` with arguments
// the binary accepts.
func thalwegPod(t *testing.T, cl cluster, name, containerName, command string) (*appsv1.StatefulSet, *corev1.Container) {
	t.Helper()
	sts, ok := cl.statefulSets[name]
	if !ok {
		t.Fatalf("no StatefulSet %s", name)
	}
	c := container(t, sts, containerName)
	checkPodBasics(t, cl, sts, c)
	if len(c.Args) == 0 || c.Args[0] != command {
		t.Fatalf("%s args %q, want thalweg %s", name, c.Args, command)
	}
	if ok, out := acceptsArgs(t, c.Args); !ok {
		t.Fatalf("thalweg does not accept the args of %s %q:\n%s", name, c.Args, out)
	}
	return sts, c
}

// servicePortsReach checks that svc selects the pods of sts and that each of
// its ports targets one of c's ports; it returns the Service ports by the
// container port they reach.
func servicePortsReach(t *testing.T, svc *corev1.Service, sts *appsv1.StatefulSet, c *corev1.Container) map[int32]int32 {
	t.Helper()
	if len(svc.Spec.Selector) == 0 {
		t.Errorf("Service %s selects nothing", svc.Name)
	}
	for k, v := range svc.Spec.Selector {
		if sts.Spec.Template.Labels[k] != v {
			t.Errorf("Service %s selector %s=%s does not select %s's pods", svc.Name, k, v, sts.Name)
		}
	}
	out := map[int32]int32{}
	for _, sp := range svc.Spec.Ports {
		target := sp.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(sp.Port)
		}
		out[containerPort(t, c, target)] = sp.Port
	}
	return out
}

// workerConfig returns the ConfigMap key the worker's --config points at,
// and its parsed form.
func workerConfig(t *testing.T, cl cluster, sts *appsv1.StatefulSet, c *corev1.Container) (string, map[string]any) {
	t.Helper()
	cfgPath := flagValue(t, c.Args, "--config")
	for _, vm := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(cfgPath, strings.TrimSuffix(vm.MountPath, "/")+"/")
		if !ok {
			continue
		}
		for _, v := range sts.Spec.Template.Spec.Volumes {
			if v.Name != vm.Name || v.ConfigMap == nil {
				continue
			}
			cm, ok := cl.configMaps[v.ConfigMap.Name]
			if !ok {
				t.Fatalf("volume %s names ConfigMap %q, which is not in the manifests", v.Name, v.ConfigMap.Name)
			}
			text, ok := cm.Data[rel]
			if !ok {
				t.Fatalf("--config %s: ConfigMap %s has no key %q", cfgPath, cm.Name, rel)
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(text), &m); err != nil {
				t.Fatalf("ConfigMap %s %s: %v", cm.Name, rel, err)
			}
			return text, m
		}
	}
	t.Fatalf("--config %s is on no ConfigMap volume of %s", cfgPath, sts.Name)
	return "", nil
}

func lookup(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func duration(t *testing.T, cfg map[string]any, keys ...string) time.Duration {
	t.Helper()
	s, ok := lookup(cfg, keys...).(string)
	if !ok {
		t.Fatalf("the worker config does not set %s: the grace period check needs it explicit", strings.Join(keys, "."))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(keys, "."), err)
	}
	return d
}

// containerEnv returns the container's literal env as KEY=VALUE.
func containerEnv(c *corev1.Container) []string {
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// Every manifest decodes strictly into the Kubernetes API types, and what
// they say agrees with the binary and the image: the args are flags thalweg
// accepts, the ConfigMap's config passes `thalweg validate` with the pod's
// environment, the probes hit /healthz and /readyz on the port the config's
// metrics.listen serves, the grace period outlasts drain and teardown, the
// offset store and the receiver's data are on persistent volumes, and the
// Services reach the ports they name.
func TestManifests(t *testing.T) {
	cl := index(t, loadManifests(t))

	// The negative control of acceptsArgs: an unknown flag is refused.
	if ok, out := acceptsArgs(t, []string{"run", "--no-such-flag"}); ok {
		t.Fatalf("thalweg accepted an unknown flag; acceptsArgs proves nothing:\n%s", out)
	}

	worker, wc := thalwegPod(t, cl, "thalweg-worker", "worker", "run")
	if got := flagValue(t, wc.Args, "--config"); got != imagespec.ConfigPath {
		t.Errorf("--config %s, the image's default is %s", got, imagespec.ConfigPath)
	}
	text, cfg := workerConfig(t, cl, worker, wc)

	// thalweg validate, with the pod's environment for ${VAR}.
	cfgFile := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(cfgFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	val := exec.Command(thalweg(t), "validate", "--config", cfgFile)
	val.Env = append([]string{"PATH=" + os.Getenv("PATH")}, containerEnv(wc)...)
	if out, err := val.CombinedOutput(); err != nil {
		t.Fatalf("thalweg validate of the ConfigMap's config with the pod's env: %v\n%s", err, out)
	} else {
		t.Logf("%s", bytes.TrimSpace(out))
	}

	// Probes: /healthz (liveness, startup) and /readyz (readiness) on the
	// port metrics.listen serves, which must not be loopback.
	listen, _ := lookup(cfg, "metrics", "listen").(string)
	if listen == "" {
		t.Fatal("the worker config sets no metrics.listen: no probes, no metrics")
	}
	if host, _, _ := net.SplitHostPort(listen); host == "localhost" || net.ParseIP(host).IsLoopback() {
		t.Errorf("metrics.listen %q is loopback: the kubelet cannot probe it", listen)
	}
	metricsPort := portOf(t, listen)
	if metricsPort != imagespec.MetricsPort {
		t.Errorf("metrics.listen port %d, the image exposes %d", metricsPort, imagespec.MetricsPort)
	}
	for name, pr := range map[string]struct {
		p    *corev1.Probe
		path string
	}{
		"liveness":  {wc.LivenessProbe, "/healthz"},
		"readiness": {wc.ReadinessProbe, "/readyz"},
		"startup":   {wc.StartupProbe, "/healthz"},
	} {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("worker %s probe: want an httpGet of %s", name, pr.path)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path {
			t.Errorf("worker %s probe path %q, want %q", name, pr.p.HTTPGet.Path, pr.path)
		}
		if got := containerPort(t, wc, pr.p.HTTPGet.Port); got != metricsPort {
			t.Errorf("worker %s probe on port %d, metrics.listen serves %d", name, got, metricsPort)
		}
	}
	ms, ok := cl.services["thalweg-worker-metrics"]
	if !ok {
		t.Fatal("no Service thalweg-worker-metrics")
	}
	if _, ok := servicePortsReach(t, ms, worker, wc)[metricsPort]; !ok {
		t.Errorf("Service %s does not reach the metrics port %d", ms.Name, metricsPort)
	}

	// Grace period > drain + teardown.
	drain := duration(t, cfg, "shutdown", "drain_timeout")
	teardown := duration(t, cfg, "store", "teardown_timeout")
	grace := worker.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil {
		t.Errorf("no terminationGracePeriodSeconds: the default 30s is not above drain_timeout %v + teardown_timeout %v", drain, teardown)
	} else if time.Duration(*grace)*time.Second <= drain+teardown {
		t.Errorf("terminationGracePeriodSeconds %d is not above drain_timeout %v + teardown_timeout %v", *grace, drain, teardown)
	}

	// The offset store is on the pod's persistent volume.
	storeDir, _ := lookup(cfg, "store", "dir").(string)
	if storeDir == "" {
		t.Fatal("the worker config sets no store.dir")
	}
	persistentMount(t, worker, wc, storeDir)

	// The receiver, and the worker's way to it.
	recv, rc := thalwegPod(t, cl, "thalweg-receiver", "receiver", "receive")
	flightPort := portOf(t, flagValue(t, rc.Args, "--listen"))
	persistentMount(t, recv, rc, flagValue(t, rc.Args, "--dir"))
	for name, p := range map[string]*corev1.Probe{"liveness": rc.LivenessProbe, "readiness": rc.ReadinessProbe} {
		switch {
		case p == nil:
			t.Errorf("receiver has no %s probe", name)
		case p.TCPSocket != nil:
			if got := containerPort(t, rc, p.TCPSocket.Port); got != flightPort {
				t.Errorf("receiver %s probe on %d, it listens on %d", name, got, flightPort)
			}
		case p.GRPC != nil:
			if p.GRPC.Port != flightPort {
				t.Errorf("receiver %s probe on %d, it listens on %d", name, p.GRPC.Port, flightPort)
			}
		default:
			t.Errorf("receiver %s probe: the receiver serves gRPC only; want tcpSocket or grpc", name)
		}
	}
	rs, ok := cl.services["thalweg-receiver"]
	if !ok {
		t.Fatal("no Service thalweg-receiver")
	}
	svcPort, ok := servicePortsReach(t, rs, recv, rc)[flightPort]
	if !ok {
		t.Fatalf("Service %s does not reach the receiver's port %d", rs.Name, flightPort)
	}
	var endpoint string
	for _, e := range wc.Env {
		if e.Name == "FLIGHT_ENDPOINT" {
			endpoint = e.Value
		}
	}
	if want := fmt.Sprintf("%s:%d", rs.Name, svcPort); endpoint != want && !strings.HasPrefix(endpoint, rs.Name+".") {
		t.Errorf("worker FLIGHT_ENDPOINT %q, want the receiver Service %s", endpoint, want)
	}
	if !strings.Contains(text, "${FLIGHT_ENDPOINT}") {
		t.Errorf("the worker config does not take the Flight endpoint from FLIGHT_ENDPOINT")
	}
}

var (
	servingRE   = regexp.MustCompile(`"addr":"([^"]+)"`)
	listeningRE = regexp.MustCompile(`listening on (\S+)`)
)

// startLogged starts cmd and returns the first submatch of re in its stderr
// once it appears; the rest of stderr is kept for failure messages.
func startLogged(t *testing.T, cmd *exec.Cmd, re *regexp.Regexp, must string) (string, *syncLog) {
	t.Helper()
	pr, pw := io.Pipe()
	log := &syncLog{}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			log.add(line)
			if !sent && strings.Contains(line, must) {
				if m := re.FindStringSubmatch(line); m != nil {
					found <- m[1]
					sent = true
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() { _ = pw.Close() })
	select {
	case v := <-found:
		return v, log
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s never logged %q:\n%s", cmd.Path, must, log)
		return "", nil
	}
}

type syncLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *syncLog) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// The manifests' configuration, run: the receiver with the StatefulSet's
// args and the worker with the ConfigMap's config (on loopback, with the
// generator in place of Pulsar so no broker is needed) answer the probes the
// manifests define with 200, and SIGTERM drains the worker to exit 0 well
// within terminationGracePeriodSeconds.
func TestManifestsProbesAnswer(t *testing.T) {
	cl := index(t, loadManifests(t))
	worker, recv := cl.statefulSets["thalweg-worker"], cl.statefulSets["thalweg-receiver"]
	if worker == nil || recv == nil {
		t.Fatal("worker or receiver StatefulSet missing")
	}
	wc, rc := container(t, worker, "worker"), container(t, recv, "receiver")
	_, cfg := workerConfig(t, cl, worker, wc)
	dir := t.TempDir()

	// The receiver, with its manifest's args but a loopback port and a temp dir.
	rargs := slices.Clone(rc.Args)
	for i := range rargs {
		switch {
		case i > 0 && rargs[i-1] == "--listen":
			rargs[i] = "127.0.0.1:0"
		case i > 0 && rargs[i-1] == "--dir":
			rargs[i] = filepath.Join(dir, "receiver")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rcmd := exec.CommandContext(ctx, thalweg(t), rargs...)
	rcmd.Cancel = func() error { return rcmd.Process.Signal(syscall.SIGTERM) }
	raddr, _ := startLogged(t, rcmd, listeningRE, "listening on")
	defer func() { cancel(); _ = rcmd.Wait() }()

	// The worker config, on loopback with the generator as its source.
	cfg["source"] = map[string]any{"kind": "generator", "generator": map[string]any{"records": 0, "rate": 2000, "partitions": 2}}
	cfg["metrics"].(map[string]any)["listen"] = "127.0.0.1:0"
	cfg["store"].(map[string]any)["dir"] = filepath.Join(dir, "offsets")
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(cfgFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wargs := slices.Clone(wc.Args)
	for i := range wargs {
		if i > 0 && wargs[i-1] == "--config" {
			wargs[i] = cfgFile
		}
	}
	wcmd := exec.CommandContext(ctx, thalweg(t), wargs...)
	wcmd.Env = append(os.Environ(), "FLIGHT_ENDPOINT="+raddr)
	maddr, wlog := startLogged(t, wcmd, servingRE, "serving /metrics")
	exited := make(chan error, 1)
	go func() { exited <- wcmd.Wait() }()

	get := func(p string) (int, string) {
		resp, err := http.Get("http://" + maddr + p)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	// await polls cond until it holds, failing the test after 30 s with
	// what and the worker's log. (testenv.WaitFor is in the thalweg
	// module, which this one does not require.)
	await := func(what string, cond func() bool) {
		t.Helper()
		poll := time.NewTicker(50 * time.Millisecond)
		defer poll.Stop()
		for deadline := time.Now().Add(30 * time.Second); !cond(); <-poll.C {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30s for %s\nworker log:\n%s", what, wlog)
			}
		}
	}
	probes := []*corev1.Probe{wc.StartupProbe, wc.LivenessProbe, wc.ReadinessProbe}
	for _, p := range probes {
		var code int
		var body string
		await("GET "+p.HTTPGet.Path+" 200", func() bool {
			code, body = get(p.HTTPGet.Path)
			return code == http.StatusOK
		})
		t.Logf("GET %s: %d %s", p.HTTPGet.Path, code, body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "thalweg_") {
		t.Errorf("GET /metrics: %d, %d bytes without thalweg_ series", code, len(body))
	}
	// SIGTERM comes with batches delivered, as in a pod that has been serving.
	acked := regexp.MustCompile(`(?m)^thalweg_source_acked_total(\{[^}]*\})? [1-9]`)
	await("records acknowledged upstream", func() bool {
		_, body := get("/metrics")
		return acked.MatchString(body)
	})

	// What the kubelet does on pod deletion: SIGTERM, SIGKILL after the grace.
	grace := time.Duration(*worker.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	start := time.Now()
	if err := wcmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("worker after SIGTERM: %v\n%s", err, wlog)
		}
		t.Logf("worker drained and exited 0 in %v (grace %v)", time.Since(start).Round(time.Millisecond), grace)
	case <-time.After(grace):
		_ = wcmd.Process.Kill()
		t.Fatalf("worker still running %v after SIGTERM: the kubelet would SIGKILL it\n%s", grace, wlog)
	}
}
