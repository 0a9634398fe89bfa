package disttest

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The stand-in for `docker run` that kustomize and kpt call to run a
// containerized function. No container engine runs on this project's
// machines, so this is a hand-written imitation of the part of docker run
// these tools use, and says so: it runs the image's own entrypoint, working
// directory and user database, but does not isolate (no namespaces, no
// chroot, no network cut). It takes its images from the docker-archive
// tarballs named in $FAKE_DOCKER_TARBALLS (as docker load would have put
// them in the engine) and appends each command line to $FAKE_DOCKER_LOG.
//
// It refuses what docker refuses where it matters to the image: an image
// no tarball is tagged with, a user name the image's /etc/passwd lacks, a
// relative mount source or target. Unknown flags are refused, so that a
// change in what kustomize passes shows up here.
func fakeDocker(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if log := os.Getenv("FAKE_DOCKER_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, strings.Join(args, " "))
			f.Close()
		}
	}
	code, err := dockerRun(args, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "docker (test stand-in): %v\n", err)
	}
	return code
}

type runOptions struct {
	user   string
	mounts []mount
	env    []string
	image  string
	args   []string
}

type mount struct{ source, target string }

func parseRun(args []string) (runOptions, error) {
	var o runOptions
	if len(args) == 0 || args[0] != "run" {
		return o, fmt.Errorf("only docker run is supported, got %q", args)
	}
	args = args[1:]
	value := func(i int) (string, error) {
		if i+1 >= len(args) {
			return "", fmt.Errorf("flag %s needs a value", args[i])
		}
		return args[i+1], nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			o.image, o.args = a, args[i+1:]
			return o, nil
		}
		switch a {
		case "--rm", "-i", "--security-opt=no-new-privileges":
		case "-a":
			v, err := value(i)
			if err != nil {
				return o, err
			}
			if !slices.Contains([]string{"STDIN", "STDOUT", "STDERR"}, v) {
				return o, fmt.Errorf("-a %s", v)
			}
			i++
		case "--network":
			v, err := value(i)
			if err != nil {
				return o, err
			}
			if v != "none" {
				return o, fmt.Errorf("--network %s: the function is run without a network", v)
			}
			i++
		case "--user":
			v, err := value(i)
			if err != nil {
				return o, err
			}
			o.user = v
			i++
		case "--mount":
			v, err := value(i)
			if err != nil {
				return o, err
			}
			m, err := parseMount(v)
			if err != nil {
				return o, err
			}
			o.mounts = append(o.mounts, m)
			i++
		case "-e":
			v, err := value(i)
			if err != nil {
				return o, err
			}
			if !strings.Contains(v, "=") {
				v += "=" + os.Getenv(v)
			}
			o.env = append(o.env, v)
			i++
		default:
			return o, fmt.Errorf("unknown flag %s", a)
		}
	}
	return o, errors.New("no image")
}

func parseMount(s string) (mount, error) {
	var m mount
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "type":
			if v != "bind" {
				return m, fmt.Errorf("--mount %s: only bind mounts", s)
			}
		case "source", "src":
			m.source = v
		case "target", "dst", "destination":
			m.target = v
		case "readonly":
		default:
			return m, fmt.Errorf("--mount %s: unknown option %s", s, k)
		}
	}
	if !filepath.IsAbs(m.source) || !filepath.IsAbs(m.target) {
		return m, fmt.Errorf("invalid mount config for type \"bind\": %q, %q: mount path must be absolute", m.source, m.target)
	}
	return m, nil
}

func dockerRun(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	o, err := parseRun(args)
	if err != nil {
		return 125, err
	}
	img, err := findImage(o.image)
	if err != nil {
		return 125, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return 125, err
	}
	root, err := os.MkdirTemp("", "fake-docker-rootfs-")
	if err != nil {
		return 125, err
	}
	defer os.RemoveAll(root)
	// The user the function runs as must be able to reach its files.
	if err := os.Chmod(root, 0o755); err != nil {
		return 125, err
	}
	if err := unpack(img, root); err != nil {
		return 125, err
	}
	user := o.user
	if user == "" {
		user = cf.Config.User
	}
	uid, gid, err := lookupUser(root, user)
	if err != nil {
		return 126, err
	}
	for _, m := range o.mounts {
		// Seen from inside, a bind mount is a plain folder (a symbolic
		// link would lead outside the function's working directory, which
		// it refuses): copy it, readable by the user the function runs as.
		if err := copyDir(m.source, filepath.Join(root, m.target)); err != nil {
			return 125, fmt.Errorf("mount %s: %w", m.source, err)
		}
	}
	if len(cf.Config.Entrypoint) == 0 {
		return 125, errors.New("the image has no entrypoint")
	}
	rest := cf.Config.Cmd
	if len(o.args) > 0 {
		rest = o.args
	}
	argv := append(slices.Clone(cf.Config.Entrypoint[1:]), rest...)
	cmd := exec.Command(filepath.Join(root, cf.Config.Entrypoint[0]), argv...)
	cmd.Dir = filepath.Join(root, cf.Config.WorkingDir)
	cmd.Env = append(slices.Clone(cf.Config.Env), o.env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), nil
		}
		return 127, err
	}
	return 0, nil
}

// findImage returns the image of one of $FAKE_DOCKER_TARBALLS tagged ref,
// for this machine's platform.
func findImage(ref string) (v1.Image, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return nil, err
	}
	for _, path := range filepath.SplitList(os.Getenv("FAKE_DOCKER_TARBALLS")) {
		img, err := tarball.ImageFromPath(path, &tag)
		if err != nil {
			continue // not tagged ref
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if cf.OS == hostPlatform.OS && cf.Architecture == hostPlatform.Architecture {
			return img, nil
		}
	}
	return nil, fmt.Errorf("Unable to find image '%s' locally", ref)
}

// unpack writes the image's filesystem (its layers flattened) into root.
func unpack(img v1.Image, root string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			return fmt.Errorf("layer entry %s leads outside the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, fs.FileMode(h.Mode).Perm()); err != nil {
				return err
			}
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, data, fs.FileMode(h.Mode).Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("layer entry %s: type %q not expected in this image", h.Name, h.Typeflag)
		}
	}
}

// lookupUser resolves docker's --user: uid[:gid] as numbers, or a name the
// image's /etc/passwd must hold (docker: "unable to find user nobody: no
// matching entries in passwd file").
func lookupUser(root, user string) (uint32, uint32, error) {
	uidStr, gidStr, hasGID := strings.Cut(user, ":")
	if uid, err := strconv.ParseUint(uidStr, 10, 32); err == nil {
		gid := uid
		if hasGID {
			if gid, err = strconv.ParseUint(gidStr, 10, 32); err != nil {
				return 0, 0, fmt.Errorf("group %q: not a number", gidStr)
			}
		}
		return uint32(uid), uint32(gid), nil
	}
	f, err := os.Open(filepath.Join(root, "etc", "passwd"))
	if err != nil {
		return 0, 0, fmt.Errorf("unable to find user %s: no matching entries in passwd file", uidStr)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 4 && fields[0] == uidStr {
			uid, err1 := strconv.ParseUint(fields[2], 10, 32)
			gid, err2 := strconv.ParseUint(fields[3], 10, 32)
			if err1 != nil || err2 != nil {
				return 0, 0, fmt.Errorf("/etc/passwd: bad entry %q", sc.Text())
			}
			return uint32(uid), uint32(gid), nil
		}
	}
	return 0, 0, fmt.Errorf("unable to find user %s: no matching entries in passwd file", uidStr)
}
