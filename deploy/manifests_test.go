package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// kinds are the objects the manifests may hold: a new function for each,
// with the API version it is at.
var kinds = map[string]struct {
	apiVersion string
	new        func() any
}{
	"ConfigMap":             {"v1", func() any { return new(corev1.ConfigMap) }},
	"Service":               {"v1", func() any { return new(corev1.Service) }},
	"PersistentVolumeClaim": {"v1", func() any { return new(corev1.PersistentVolumeClaim) }},
	"StatefulSet":           {"apps/v1", func() any { return new(appsv1.StatefulSet) }},
	"Deployment":            {"apps/v1", func() any { return new(appsv1.Deployment) }},
	"CronJob":               {"batch/v1", func() any { return new(batchv1.CronJob) }},
}

// manifest is one object of a file.
type manifest struct {
	file string
	kind string
	obj  any
}

// readManifests decodes every object of kubernetes/*.yaml strictly: a
// field the API type does not have, a value of the wrong type, a
// duplicate key or a bad quantity fail.
func readManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var out []manifest
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			k, ok := kinds[tm.Kind]
			if !ok {
				t.Errorf("%s: kind %q is not one this test knows", f, tm.Kind)
				continue
			}
			if tm.APIVersion != k.apiVersion {
				t.Errorf("%s: %s at apiVersion %q, want %q", f, tm.Kind, tm.APIVersion, k.apiVersion)
			}
			obj := k.new()
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Errorf("%s: %s: %v", f, tm.Kind, err)
				continue
			}
			out = append(out, manifest{file: f, kind: tm.Kind, obj: obj})
		}
	}
	return out
}

// stripComments drops the comment lines of a YAML document.
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// TestManifests checks the manifests beyond their schema: names, the
// objects they refer to (ConfigMaps, claims, volumes, Secrets), that
// selectors select their pods, the CronJobs' schedules and failure
// policies, and that every image is pinned or the neardup image.
func TestManifests(t *testing.T) {
	ms := readManifests(t)
	names := map[string]bool{} // kind/name
	for _, m := range ms {
		meta := m.obj.(metav1.Object) // every kind embeds ObjectMeta
		if meta.GetName() == "" {
			t.Errorf("%s: a %s without a name", m.file, m.kind)
		}
		if names[m.kind+"/"+meta.GetName()] {
			t.Errorf("%s: %s/%s twice", m.file, m.kind, meta.GetName())
		}
		names[m.kind+"/"+meta.GetName()] = true
	}
	var podLabels []labels.Set
	secrets := map[string]bool{}
	for _, m := range ms {
		var pod *corev1.PodTemplateSpec
		var sel *metav1.LabelSelector
		var claimed []string // the volumes of a StatefulSet's claim templates
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			pod, sel = &o.Spec.Template, o.Spec.Selector
		case *appsv1.StatefulSet:
			pod, sel = &o.Spec.Template, o.Spec.Selector
			for _, c := range o.Spec.VolumeClaimTemplates {
				claimed = append(claimed, c.Name)
			}
		case *batchv1.CronJob:
			pod = &o.Spec.JobTemplate.Spec.Template
			if _, err := cron.ParseStandard(o.Spec.Schedule); err != nil {
				t.Errorf("%s: schedule %q: %v", m.file, o.Spec.Schedule, err)
			}
			if o.Spec.JobTemplate.Spec.PodFailurePolicy != nil && pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("%s: a podFailurePolicy needs restartPolicy Never, not %q", m.file, pod.Spec.RestartPolicy)
			}
			if o.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
				t.Errorf("%s: concurrencyPolicy %q: two runs of a job that resumes from its state must not overlap", m.file, o.Spec.ConcurrencyPolicy)
			}
		}
		if pod == nil {
			continue
		}
		if sel != nil {
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil || !s.Matches(labels.Set(pod.Labels)) {
				t.Errorf("%s: the selector %v does not select the pod template's labels %v (%v)", m.file, sel, pod.Labels, err)
			}
		}
		podLabels = append(podLabels, pod.Labels)
		checkPod(t, m.file, pod.Spec, claimed, names, secrets)
	}
	for _, m := range ms {
		if s, ok := m.obj.(*corev1.Service); ok {
			sel := labels.SelectorFromSet(s.Spec.Selector)
			if !slices.ContainsFunc(podLabels, func(l labels.Set) bool { return sel.Matches(l) }) {
				t.Errorf("%s: Service %s selects no pod of the manifests (%v)", m.file, s.Name, s.Spec.Selector)
			}
		}
	}
	// The Secrets are the user's to create: the operations guide says how.
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for s := range secrets {
		if !strings.Contains(string(doc), "kubectl create secret generic "+s) {
			t.Errorf("Secret %s: docs/operations.md does not say how to create it (kubectl create secret generic %s)", s, s)
		}
	}
}

// checkPod checks a pod's containers and volumes (those of spec and the
// claimed ones) against the objects there are (names: kind/name) and adds
// the Secrets it uses to secrets.
func checkPod(t *testing.T, file string, spec corev1.PodSpec, claimed []string, names, secrets map[string]bool) {
	t.Helper()
	volumes := map[string]bool{}
	for _, c := range claimed {
		volumes[c] = true
	}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
		switch {
		case v.ConfigMap != nil && !names["ConfigMap/"+v.ConfigMap.Name]:
			t.Errorf("%s: volume %s: no ConfigMap %s in the manifests", file, v.Name, v.ConfigMap.Name)
		case v.PersistentVolumeClaim != nil && !names["PersistentVolumeClaim/"+v.PersistentVolumeClaim.ClaimName]:
			t.Errorf("%s: volume %s: no PersistentVolumeClaim %s in the manifests", file, v.Name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	if len(spec.Containers) == 0 {
		t.Errorf("%s: a pod without containers", file)
	}
	for _, c := range spec.Containers {
		where := fmt.Sprintf("%s: container %s", file, c.Name)
		if c.Image == "" || !strings.Contains(c.Image, ":") {
			t.Errorf("%s: image %q without a tag", where, c.Image)
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("%s: mounts volume %s, which the pod does not have", where, m.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				secrets[e.ValueFrom.SecretKeyRef.Name] = true
			}
		}
	}
}

// TestStrictDecode checks that the decoding of readManifests fails on
// what it must: an unknown field, a value of the wrong type, a bad
// quantity.
func TestStrictDecode(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", "kind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\nextra: 1\n", "unknown field"},
		{"misspelled field", "kind: CronJob\nmetadata: {name: x}\nspec: {schedul: '0 3 * * 1'}\n", "unknown field"},
		{"wrong type", "kind: Deployment\nmetadata: {name: x}\nspec: {replicas: three}\n", "cannot unmarshal"},
		{"bad quantity", "kind: PersistentVolumeClaim\nmetadata: {name: x}\nspec: {resources: {requests: {storage: 20 gigs}}}\n", "quantities must match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(tc.doc), &tm); err != nil {
				t.Fatal(err)
			}
			err := yaml.UnmarshalStrict([]byte(tc.doc), kinds[tm.Kind].new())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decode: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
