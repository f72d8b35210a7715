package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dockerStage is a stage of a Dockerfile: its base (another stage or an
// image) and the instructions this test reads.
type dockerStage struct {
	name, from string
	copies     []dockerCopy
	user       string
	entrypoint string
	runs       []string
}

// dockerCopy is a COPY instruction: its sources, destination, and the
// --from and --chown values.
type dockerCopy struct {
	from, chown string
	srcs        []string
	dst         string
}

// readStages reads the stages of a Dockerfile, in order.
func readStages(t *testing.T, path string) []*dockerStage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages []*dockerStage
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if f[0] == "FROM" {
			s := &dockerStage{from: f[1]}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				s.name = f[3]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			continue
		}
		s := stages[len(stages)-1]
		switch f[0] {
		case "COPY":
			var c dockerCopy
			args := f[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				k, v, _ := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
				switch k {
				case "from":
					c.from = v
				case "chown":
					c.chown = v
				default:
					t.Fatalf("%s: COPY --%s is not modelled", path, k)
				}
				args = args[1:]
			}
			if len(args) < 2 {
				t.Fatalf("%s: %q", path, line)
			}
			c.srcs, c.dst = args[:len(args)-1], args[len(args)-1]
			s.copies = append(s.copies, c)
		case "USER":
			s.user = f[1]
		case "ENTRYPOINT":
			s.entrypoint = strings.Join(f[1:], " ")
		case "RUN":
			s.runs = append(s.runs, strings.Join(f[1:], " "))
		}
	}
	return stages
}

// chain is the stage named target (the last one if target is empty)
// followed by the stages it is built on.
func chain(t *testing.T, stages []*dockerStage, target string) []*dockerStage {
	t.Helper()
	i := len(stages) - 1
	if target != "" {
		i = slices.IndexFunc(stages, func(s *dockerStage) bool { return s.name == target })
	}
	if i < 0 {
		t.Fatalf("no stage %s", target)
	}
	out := []*dockerStage{stages[i]}
	for {
		j := slices.IndexFunc(stages[:i], func(s *dockerStage) bool { return s.name == stages[i].from })
		if j < 0 {
			return out
		}
		i = j
		out = append(out, stages[i])
	}
}

// TestDockerfilePrebuilt checks that Dockerfile.prebuilt's neardup image,
// built from binaries made outside (scripts/build-images), is the
// Dockerfile's image: FROM scratch both, the same files copied to the
// same places with the same owners (what scripts/image-rootfs writes,
// which the Dockerfile's build stage runs, and the commands the
// Dockerfile builds, to the same directory), the same user (not root)
// and entrypoint. It also runs scripts/image-rootfs as the Dockerfile's
// build stage does and checks that every directory the final stage copies
// from it is there, /tmp with mode 1777.
func TestDockerfilePrebuilt(t *testing.T) {
	ib := readDockerfile(t)
	src := chain(t, readStages(t, "../Dockerfile"), "")
	pre := chain(t, readStages(t, "../Dockerfile.prebuilt"), "neardup")
	final := src[0]
	if final.from != "scratch" || pre[len(pre)-1].from != "scratch" {
		t.Fatalf("the images are FROM %s (Dockerfile) and %s (Dockerfile.prebuilt), want scratch", final.from, pre[len(pre)-1].from)
	}

	// The Dockerfile's build stage writes the image's other files with
	// scripts/image-rootfs DIR.
	var rootfsDir string
	build := chain(t, readStages(t, "../Dockerfile"), "build")
	for _, r := range build[0].runs {
		if f := strings.Fields(r); len(f) == 3 && f[0] == "sh" && f[1] == "scripts/image-rootfs" {
			rootfsDir = strings.TrimSuffix(f[2], "/") + "/"
		}
	}
	if rootfsDir == "" {
		t.Fatal("the Dockerfile's build stage does not run `sh scripts/image-rootfs DIR`")
	}
	made := t.TempDir()
	if out, err := exec.Command("sh", "../scripts/image-rootfs", made).CombinedOutput(); err != nil {
		t.Fatalf("scripts/image-rootfs: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(made, "rootfs", "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("scripts/image-rootfs's /tmp: %v, %v; want drwxrwxrwt", fi.Mode(), err)
	}
	passwd, _ := os.ReadFile(filepath.Join(made, "rootfs", "etc", "passwd"))
	if !strings.Contains(string(passwd), ":65532:65532:") {
		t.Errorf("scripts/image-rootfs's /etc/passwd names no user 65532:\n%s", passwd)
	}

	// What each image copies, as "SOURCE -> DEST (owner)", the sources
	// relative to where the files come from: the build stage's
	// rootfsDir or go build's output, or the prebuilt context's bin/.
	describe := func(copies []dockerCopy, binaries func(dockerCopy) []string) []string {
		var out []string
		for _, c := range copies {
			srcs := binaries(c)
			if srcs == nil {
				for _, s := range c.srcs {
					srcs = append(srcs, strings.TrimPrefix(s, rootfsDir))
				}
			}
			for _, s := range srcs {
				out = append(out, s+" -> "+c.dst+" ("+c.chown+")")
			}
		}
		slices.Sort(out)
		return out
	}
	outDir := ib.args[ib.outIndex]
	want := describe(final.copies, func(c dockerCopy) []string {
		if len(c.srcs) != 1 || c.srcs[0] != outDir {
			if c.from != "" && !strings.HasPrefix(c.srcs[0], rootfsDir) {
				t.Errorf("the Dockerfile copies %s from stage %s, neither go build's output nor what scripts/image-rootfs wrote", c.srcs[0], c.from)
			}
			return nil
		}
		var bins []string
		for _, name := range ib.commands {
			bins = append(bins, "bin/"+name)
		}
		return bins
	})
	for _, c := range final.copies {
		if c.from != "" && strings.HasPrefix(c.srcs[0], rootfsDir) {
			if _, err := os.Stat(filepath.Join(made, strings.TrimPrefix(c.srcs[0], rootfsDir))); err != nil {
				t.Errorf("the Dockerfile copies %s, which scripts/image-rootfs does not write: %v", c.srcs[0], err)
			}
		}
	}
	var preCopies []dockerCopy
	for _, s := range slices.Backward(pre) {
		preCopies = append(preCopies, s.copies...)
	}
	got := describe(preCopies, func(c dockerCopy) []string {
		if strings.HasPrefix(c.srcs[0], "bin/") {
			return c.srcs
		}
		return nil
	})
	if !slices.Equal(got, want) {
		t.Errorf("Dockerfile.prebuilt's neardup image copies\n\t%s\nthe Dockerfile's\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	user := func(stages []*dockerStage) string {
		for _, s := range stages {
			if s.user != "" {
				return s.user
			}
		}
		return ""
	}
	entrypoint := func(stages []*dockerStage) string {
		for _, s := range stages {
			if s.entrypoint != "" {
				return s.entrypoint
			}
		}
		return ""
	}
	if u := user(src[:1]); u == "" || strings.HasPrefix(u, "0") || strings.HasPrefix(u, "root") || u != user(pre) {
		t.Errorf("USER %q (Dockerfile), %q (Dockerfile.prebuilt): want the same user, not root", u, user(pre))
	}
	if e := entrypoint(src[:1]); e == "" || e != entrypoint(pre) {
		t.Errorf("ENTRYPOINT %s (Dockerfile), %s (Dockerfile.prebuilt): want the same", e, entrypoint(pre))
	}
}
