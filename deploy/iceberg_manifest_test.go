package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// podsOf is d's pod template as the StatefulSet helpers read it; its
// serviceName is the Service that selects the pods (a Deployment has no
// governing Service).
func podsOf(d *appsv1.Deployment, service string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: d.ObjectMeta, Spec: appsv1.StatefulSetSpec{
		Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template, ServiceName: service}}
}

// TestIcebergWorkersManifest: iceberg-workers.yaml is N = 3 workers on one
// Iceberg raw anchor (a REST catalog, an S3 warehouse) whose config passes
// `thalweg validate` with the pod's environment; the credentials come from
// keys of the Secret in the manifests, the catalog's token_env and the AWS
// chain's variables among them; the offset store is on an emptyDir, which
// holds because the anchor is an Iceberg table (it holds the positions) on
// an ordered subscription (the worker reconciles with it) and there is no
// secondary (whose coverage only the store keeps); the probes, the grace
// period and the metrics Service are right; the memory limit is above the
// bound `thalweg validate` prints. Every Deployment of the manifests is
// such a worker.
func TestIcebergWorkersManifest(t *testing.T) {
	cl := index(t, loadManifests(t))
	const name, svcName = "thalweg-iceberg-worker", "thalweg-iceberg-worker-metrics"
	for n := range cl.deployments {
		if n != name {
			t.Errorf("Deployment %s: a worker owns an offset store; only one whose Iceberg anchor rebuilds it may lose it (use a StatefulSet)", n)
		}
	}
	dep, ok := cl.deployments[name]
	if !ok {
		t.Fatalf("no Deployment %s", name)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3 workers on the table", dep.Spec.Replicas)
	}
	cl.statefulSets[name] = podsOf(dep, svcName)
	pods, c := thalwegPod(t, cl, name, "worker", "run")
	text, cfg := workerConfig(t, cl, pods, c)

	// The pod's environment: literal values, and the Secret's keys.
	env := containerEnv(c)
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref == nil {
			t.Errorf("env %s: want a value or a secretKeyRef", e.Name)
			continue
		}
		sec, ok := cl.secrets[ref.Name]
		if !ok {
			t.Errorf("env %s: Secret %q is not in the manifests", e.Name, ref.Name)
			continue
		}
		if _, ok := sec.StringData[ref.Key]; !ok {
			if _, ok := sec.Data[ref.Key]; !ok {
				t.Errorf("env %s: Secret %s has no key %q", e.Name, ref.Name, ref.Key)
			}
		}
		fromSecret[e.Name] = true
		env = append(env, e.Name+"=from-the-secret")
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if !fromSecret[v] {
			t.Errorf("%s does not come from the Secret", v)
		}
	}
	cfgFile := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(cfgFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	val := exec.Command(thalweg(t), "validate", "--config", cfgFile, "--secrets")
	val.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := val.CombinedOutput()
	if err != nil {
		t.Fatalf("thalweg validate --secrets of the ConfigMap's config with the pod's env: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))

	// One destination: the raw anchor, an Iceberg table of a REST catalog
	// on S3, on an ordered subscription.
	dests, _ := lookup(cfg, "destinations").([]any)
	if len(dests) != 1 {
		t.Fatalf("%d destinations, want the Iceberg raw anchor alone (a secondary's coverage lives only in the store)", len(dests))
	}
	d, _ := dests[0].(map[string]any)
	if d["kind"] != "iceberg" || d["role"] != "raw_anchor" {
		t.Errorf("destination kind %v role %v, want an iceberg raw_anchor", d["kind"], d["role"])
	}
	if typ := lookup(d, "iceberg", "catalog", "type"); typ != "rest" {
		t.Errorf("catalog type %v, want rest", typ)
	}
	tokenEnv, _ := lookup(d, "iceberg", "catalog", "token_env").(string)
	if tokenEnv == "" || !fromSecret[tokenEnv] {
		t.Errorf("catalog token_env %q is not set from the Secret", tokenEnv)
	}
	if wh := lookup(d, "iceberg", "warehouse"); wh != "${ICEBERG_WAREHOUSE}" || !regexp.MustCompile(`(^|\n)ICEBERG_WAREHOUSE=s3://`).MatchString(joinLines(env)) {
		t.Errorf("warehouse %v (env %v), want an s3:// warehouse from ICEBERG_WAREHOUSE", wh, env)
	}
	if st := lookup(cfg, "source", "subscription", "type"); st != "failover" && st != "exclusive" {
		t.Errorf("subscription type %v: only an ordered subscription reconciles with the table on an empty store", st)
	}

	// The store on an emptyDir volume; the config on the ConfigMap.
	storeDir, _ := lookup(cfg, "store", "dir").(string)
	var storeVolume string
	for _, vm := range c.VolumeMounts {
		if rel, err := filepath.Rel(vm.MountPath, storeDir); err == nil && !filepath.IsAbs(rel) && rel != ".." && !bytes.HasPrefix([]byte(rel), []byte("../")) {
			storeVolume = vm.Name
		}
	}
	var emptyDir bool
	for _, v := range pods.Spec.Template.Spec.Volumes {
		if v.Name == storeVolume && v.EmptyDir != nil {
			emptyDir = true
		}
	}
	if !emptyDir {
		t.Errorf("store.dir %s is on volume %q, want an emptyDir", storeDir, storeVolume)
	}

	// Probes, grace period, the metrics Service.
	for probe, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
		want := map[string]string{"liveness": "/healthz", "readiness": "/readyz", "startup": "/healthz"}[probe]
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want {
			t.Errorf("%s probe %+v, want an httpGet of %s", probe, p, want)
			continue
		}
		if got := containerPort(t, c, p.HTTPGet.Port); got != portOf(t, lookup(cfg, "metrics", "listen").(string)) {
			t.Errorf("%s probe on port %d, not metrics.listen's", probe, got)
		}
	}
	drain, teardown := duration(t, cfg, "shutdown", "drain_timeout"), duration(t, cfg, "store", "teardown_timeout")
	if g := pods.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= drain+teardown {
		t.Errorf("terminationGracePeriodSeconds %v is not above drain_timeout %v + teardown_timeout %v", g, drain, teardown)
	}
	if _, ok := servicePortsReach(t, cl.services[svcName], pods, c)[portOf(t, lookup(cfg, "metrics", "listen").(string))]; !ok {
		t.Errorf("Service %s does not reach the metrics port", svcName)
	}
	for sname, sts := range cl.statefulSets {
		if sname == name {
			continue
		}
		match := true
		for k, v := range cl.services[svcName].Spec.Selector {
			match = match && sts.Spec.Template.Labels[k] == v
		}
		if match {
			t.Errorf("Service %s selects the pods of StatefulSet %s too", svcName, sname)
		}
	}

	// The memory limit holds the bound validate prints.
	m := regexp.MustCompile(`total +([0-9.]+)MiB`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("validate printed no memory bound total:\n%s", out)
	}
	bound, _ := strconv.ParseFloat(string(m[1]), 64)
	limit := c.Resources.Limits[corev1.ResourceMemory]
	if want := resource.MustParse(strconv.Itoa(int(bound)+1) + "Mi"); limit.Cmp(want) < 0 {
		t.Errorf("memory limit %s is below the bound %.1f MiB", limit.String(), bound)
	}
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for _, l := range s {
		b.WriteString(l + "\n")
	}
	return b.String()
}
