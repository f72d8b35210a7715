package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/dataroot"
	"go.yaml.in/yaml/v3"
)

// k8sObject is what TestDeployManifests reads of a Kubernetes object: a
// ConfigMap's data and the pod template of a workload (Deployment,
// StatefulSet, CronJob). The module under deploy/ decodes the manifests
// strictly into the Kubernetes API's types.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template    k8sPodTemplate `yaml:"template"`
		JobTemplate struct {
			Spec struct {
				Template k8sPodTemplate `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

type k8sPodTemplate struct {
	Spec struct {
		Containers []k8sContainer `yaml:"containers"`
		Volumes    []struct {
			Name      string `yaml:"name"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
		} `yaml:"volumes"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// TestDeployManifests checks the command lines of the neardup containers
// in deploy/kubernetes as their programs would take them: the
// arguments, with the container's $(VAR)s expanded as Kubernetes does,
// through the flag sets and the config file that --config names, read
// from the ConfigMap the container mounts there; then the command's own
// checks of its settings (those it makes before any work). A flag
// renamed, a key of a config file that is no flag, a bad value fail. And
// every location a job with outside workers names (its series member, its
// kept corpus, its inputs) must lie under the workers' data roots: they
// refuse the tasks of any other.
func TestDeployManifests(t *testing.T) {
	files, err := filepath.Glob("../../deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var objs []k8sObject
	configMaps := map[string]map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			objs = append(objs, o)
			if o.Kind == "ConfigMap" {
				configMaps[o.Metadata.Name] = o.Data
			}
		}
	}
	programs := map[string][]Command{"/usr/local/bin/coordinator": Coordinator(), "/usr/local/bin/worker": Worker()}
	seen := map[string]int{}
	var roots, named []string // the workers' data roots; what jobs on outside workers name
	for _, o := range objs {
		pod := o.Spec.Template
		if o.Kind == "CronJob" {
			pod = o.Spec.JobTemplate.Spec.Template
		}
		for _, c := range pod.Spec.Containers {
			cmds, ok := programs[strings.Join(c.Command, " ")]
			if !ok {
				continue
			}
			seen[c.Command[0]]++
			t.Run(o.Kind+"/"+o.Metadata.Name+"/"+c.Name, func(t *testing.T) {
				clearEnv(t)
				mounted := map[string]map[string]string{} // mount path: the ConfigMap's data
				for _, m := range c.VolumeMounts {
					for _, v := range pod.Spec.Volumes {
						if v.Name == m.Name && v.ConfigMap != nil {
							mounted[m.MountPath] = configMaps[v.ConfigMap.Name]
						}
					}
				}
				args := expandK8s(t, c)
				for i := range args {
					if i == 0 || args[i-1] != "--config" {
						continue
					}
					data, ok := mounted[path.Dir(args[i])][path.Base(args[i])]
					if !ok {
						t.Fatalf("--config %s: no ConfigMap key mounted there", args[i])
					}
					args[i] = filepath.Join(t.TempDir(), path.Base(args[i]))
					if err := os.WriteFile(args[i], []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd, rest := pick(cmds, args)
				fs, prepare := setup(cmd)
				inputs, err := parseInterleaved(fs, rest)
				if err != nil {
					t.Fatalf("%q: %v", args, err)
				}
				s, err := loadSettings(fs)
				if err != nil {
					t.Fatalf("%q: %v", args, err)
				}
				if s.file == "" {
					t.Errorf("%q: no --config", args)
				}
				if _, err := prepare(inputs, Streams{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
					t.Errorf("%q: %v", args, err)
				}
				value := func(name string) string {
					if f := fs.Lookup(name); f != nil {
						return f.Value.String()
					}
					return ""
				}
				switch {
				case c.Command[0] == "/usr/local/bin/worker":
					roots = append(roots, strings.Split(value("data-root"), ",")...)
				case value("nats") != "":
					// The kept corpus's flag holds the member's directory
					// once the command has prepared (DIR/NAME).
					member := value("series") + "/" + value("name")
					named = append(append(named, member, value("write-kept")), inputs...)
				}
			})
		}
	}
	dr, err := dataroot.Resolve(roots)
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range named {
		if err := dr.Check(loc); err != nil || dr.Empty() {
			t.Errorf("a job on the outside workers names %s: %v (roots %v)", loc, err, roots)
		}
	}
	if seen["/usr/local/bin/coordinator"] == 0 || seen["/usr/local/bin/worker"] == 0 {
		t.Errorf("containers running each program: %v, want the coordinator and the worker", seen)
	}
}

// expandK8s returns c's arguments with $(VAR) replaced by the value of
// the container's variable VAR as Kubernetes does; a variable from the
// downward API gets a value of the form it would have.
func expandK8s(t *testing.T, c k8sContainer) []string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-name"):
			env[e.Name] = "neardup-weekly-29384720" // a CronJob's Job: its name and the minute scheduled
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = ref.ReplaceAllStringFunc(a, func(m string) string {
			v, ok := env[m[2:len(m)-1]]
			if !ok {
				t.Errorf("container %s: %s names no variable of the container", c.Name, m)
			}
			return v
		})
	}
	return args
}
