package forge_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// Transports against the real server: TLS (--tls-cert/--tls-key), mutual TLS
// (--tls-client-ca) and a Unix domain socket (--listen unix:///path). The
// certificates come from tests/tls_certs.py, as for the other SDKs.

// transportCerts are the PEM files `python -m tests.tls_certs DIR` writes.
type transportCerts struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

// newTransportCerts writes a fresh CA with a server and a client certificate
// into a temporary directory. Each call makes a different CA.
func newTransportCerts(t *testing.T) transportCerts {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	cmd := exec.Command(python(root), "-m", "tests.tls_certs", dir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python -m tests.tls_certs: %v\n%s", err, out)
	}
	return transportCerts{
		ca:         filepath.Join(dir, "ca.pem"),
		serverCert: filepath.Join(dir, "server.pem"),
		serverKey:  filepath.Join(dir, "server.key"),
		clientCert: filepath.Join(dir, "client.pem"),
		clientKey:  filepath.Join(dir, "client.key"),
	}
}

// tlsConfig trusts c's CA only and, with withClientCert, presents c's client
// certificate.
func (c transportCerts) tlsConfig(t *testing.T, withClientCert bool) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(c.ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", c.ca)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withClientCert {
		pair, err := tls.LoadX509KeyPair(c.clientCert, c.clientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// transportScripts: one two-step weather run per workflow name.
func transportScripts(names ...string) map[string][]any {
	scripts := map[string][]any{}
	for _, name := range names {
		scripts[name] = []any{
			toolCall("get_weather", map[string]any{"city": "Paris"}),
			toolCall("report_weather", map[string]any{"city": "Paris", "weather": "sunny"}),
		}
	}
	return scripts
}

// startTransportServer starts a scripted server with args (which say where it
// listens and how) and waits until a client dialled to address with ready
// gets its server info. The server stops when the test ends.
func startTransportServer(t *testing.T, address string, ready []forge.DialOption, scripts map[string][]any, args ...string) *serverProcess {
	t.Helper()
	args = append([]string{"--backend", "scripted", "--script", writeScript(t, scripts)}, args...)
	p, err := spawnServer(repoRoot(t), address, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		client, err := forge.Dial(ctx, address, ready...)
		cancel()
		if err == nil {
			client.Close()
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("the Forge server exited before serving (%v)\nserver log:\n%s", p.cmd.ProcessState, p.log.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from %s within 60s: %v\nserver log:\n%s", address, err, p.log.String())
		}
	}
}

// loopbackAddress is a free loopback port as "127.0.0.1:port" and the flags
// that make the server listen there.
func loopbackAddress(t *testing.T) (string, []string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port), []string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}
}

func transportDial(t *testing.T, address string, opts ...forge.DialOption) *forge.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, address, opts...)
	if err != nil {
		t.Fatalf("dial %s: %v", address, err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// transportDialFails dials address with opts and returns the error, which
// must be a *forge.ConnectionLostError.
func transportDialFails(t *testing.T, address string, opts ...forge.DialOption) *forge.ConnectionLostError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, address, opts...)
	if err == nil {
		client.Close()
		t.Fatalf("dial %s succeeded, want a *ConnectionLostError", address)
	}
	var lost *forge.ConnectionLostError
	if !errors.As(err, &lost) {
		t.Fatalf("dial %s: err = %v (%T), want *ConnectionLostError", address, err, err)
	}
	t.Logf("dial %s: %v", address, err)
	return lost
}

// runWeather runs the scripted weather workflow name on client and checks
// that it completed with the terminal tool's value.
func runWeather(t *testing.T, srv *serverProcess, client *forge.Client, name string) {
	t.Helper()
	var cities []string
	wf := weatherWorkflow(name, func(_ context.Context, in weatherArgs) (string, error) {
		cities = append(cities, in.City)
		return "sunny in " + in.City, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := client.Run(ctx, wf, "What's the weather in Paris?")
	if err != nil {
		t.Fatalf("run %s: %v\nserver log:\n%s", name, err, srv.log.String())
	}
	if res.TerminalTool != "report_weather" || res.RunID == "" {
		t.Errorf("run %s: terminal tool %q, run id %q", name, res.TerminalTool, res.RunID)
	}
	if got, want := res.Value, (report{City: "Paris", Weather: "sunny"}); got != want {
		t.Errorf("run %s: value %#v, want %#v", name, got, want)
	}
	if len(cities) != 1 || cities[0] != "Paris" {
		t.Errorf("run %s: get_weather called for %v, want [Paris]", name, cities)
	}
}

func TestTransportTLS(t *testing.T) {
	certs := newTransportCerts(t)
	address, listen := loopbackAddress(t)
	trusted := forge.WithTLS(certs.tlsConfig(t, false))
	srv := startTransportServer(t, address, []forge.DialOption{trusted}, transportScripts("go_tls"),
		append(listen, "--tls-cert", certs.serverCert, "--tls-key", certs.serverKey)...)

	t.Run("a client trusting the CA runs a workflow", func(t *testing.T) {
		client := transportDial(t, address, trusted)
		info, err := client.ServerInfo(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.GetBackend() != "scripted" || info.GetVersion() == "" {
			t.Errorf("server info: backend %q, version %q", info.GetBackend(), info.GetVersion())
		}
		runWeather(t, srv, client, "go_tls")
	})
	t.Run("a plaintext client gets ConnectionLostError", func(t *testing.T) {
		transportDialFails(t, address)
	})
	t.Run("a client not trusting the CA gets ConnectionLostError", func(t *testing.T) {
		// Another CA's roots: the server's certificate must not verify.
		other := newTransportCerts(t)
		lost := transportDialFails(t, address, forge.WithTLS(other.tlsConfig(t, false)))
		if !strings.Contains(lost.Error(), "certificate") {
			t.Errorf("the error does not name the certificate: %v", lost)
		}
	})
}

func TestTransportMutualTLS(t *testing.T) {
	certs := newTransportCerts(t)
	address, listen := loopbackAddress(t)
	withCert := forge.WithTLS(certs.tlsConfig(t, true))
	srv := startTransportServer(t, address, []forge.DialOption{withCert}, transportScripts("go_mtls"),
		append(listen, "--tls-cert", certs.serverCert, "--tls-key", certs.serverKey,
			"--tls-client-ca", certs.ca)...)

	t.Run("a client presenting a certificate of the CA runs a workflow", func(t *testing.T) {
		client := transportDial(t, address, withCert)
		info, err := client.ServerInfo(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.GetBackend() != "scripted" {
			t.Errorf("server info: backend %q", info.GetBackend())
		}
		runWeather(t, srv, client, "go_mtls")
	})
	t.Run("a client without a certificate is refused", func(t *testing.T) {
		transportDialFails(t, address, forge.WithTLS(certs.tlsConfig(t, false)))
	})
	t.Run("a client certificate of another CA is refused", func(t *testing.T) {
		// Trusts the server's CA but presents a client certificate that
		// another CA signed.
		other := newTransportCerts(t)
		cfg := certs.tlsConfig(t, false)
		pair, err := tls.LoadX509KeyPair(other.clientCert, other.clientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
		transportDialFails(t, address, forge.WithTLS(cfg))
	})
	t.Run("a plaintext client is refused", func(t *testing.T) {
		transportDialFails(t, address)
	})
}

func TestTransportUnixSocket(t *testing.T) {
	// Not t.TempDir(): a socket path must stay under ~104 bytes.
	dir, err := os.MkdirTemp("", "forge-go-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "forge.sock")
	address := "unix://" + socket
	srv := startTransportServer(t, address, nil, transportScripts("go_unix"), "--listen", address)

	st, err := os.Stat(socket)
	if err != nil {
		t.Fatalf("no socket at %s: %v", socket, err)
	}
	if st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s is %v, not a socket", socket, st.Mode())
	}
	client := transportDial(t, address)
	info, err := client.ServerInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.GetBackend() != "scripted" {
		t.Errorf("server info: backend %q", info.GetBackend())
	}
	runWeather(t, srv, client, "go_unix")

	// Another socket path in the same directory has no server behind it.
	transportDialFails(t, "unix://"+filepath.Join(dir, "none.sock"))
}
