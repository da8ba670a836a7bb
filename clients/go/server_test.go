package forge_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// The tests run the real Forge server (Python) from the repository's venv;
// FORGE_PYTHON overrides the interpreter. A missing server fails the tests.

// repoRoot is the repository root: go test runs in the package directory,
// clients/go.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func python(root string) string {
	if p := os.Getenv("FORGE_PYTHON"); p != "" {
		return p
	}
	return filepath.Join(root, ".venv", "bin", "python")
}

// serverProcess is a forge-server child process on a loopback port.
type serverProcess struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs `python -m forge_server <args> --port <free>` from the
// repository root and waits until its health service answers SERVING.
func startServer(root string, ready time.Duration, args ...string) (*serverProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := spawnServer(root, addr, append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := p.waitHealthy(ready); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, p.log.String())
	}
	return p, nil
}

// spawnServer starts `python -m forge_server args...` in the repository
// root, without waiting for it; addr is where its clients connect.
func spawnServer(root, addr string, args ...string) (*serverProcess, error) {
	cmd := exec.Command(python(root), append([]string{"-m", "forge_server"}, args...)...)
	cmd.Dir = root
	p := &serverProcess{addr: addr, cmd: cmd, exited: make(chan struct{}), log: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the Forge server with %s (set FORGE_PYTHON or run `make install`): %w", cmd.Path, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *serverProcess) waitHealthy(timeout time.Duration) error {
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		reply, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && reply.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the Forge server exited before serving (%v)", p.cmd.ProcessState)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no SERVING answer from %s within %s", p.addr, timeout)
		}
	}
}

// stop sends SIGTERM (the server drains) and kills the process if it hangs.
func (p *serverProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

var scripted struct {
	once sync.Once
	proc *serverProcess
	dir  string
	err  error
}

// scriptedServer is one server with the scripted backend for the whole test
// binary. Its script directory holds every conformance case plus the Go
// tests' own scripts (testdata/scripts); the scripted backend keys each
// script by its workflow name.
func scriptedServer(t testing.TB) string {
	t.Helper()
	scripted.once.Do(func() {
		root := repoRoot(t)
		scripted.dir, scripted.err = os.MkdirTemp("", "forge-go-scripts-")
		if scripted.err != nil {
			return
		}
		var files []string
		for _, pattern := range []string{
			filepath.Join(root, "tests", "conformance", "cases", "*.json"),
			filepath.Join(root, "clients", "go", "testdata", "scripts", "*.json"),
		} {
			matches, _ := filepath.Glob(pattern)
			files = append(files, matches...)
		}
		for _, f := range files {
			if scripted.err = os.Symlink(f, filepath.Join(scripted.dir, filepath.Base(f))); scripted.err != nil {
				return
			}
		}
		scripted.proc, scripted.err = startServer(root, 60*time.Second,
			"--backend", "scripted", "--script", scripted.dir)
	})
	if scripted.err != nil {
		t.Fatalf("scripted Forge server: %v", scripted.err)
	}
	return scripted.proc.addr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if scripted.proc != nil {
		scripted.proc.stop()
	}
	if scripted.dir != "" {
		os.RemoveAll(scripted.dir)
	}
	os.Exit(code)
}
