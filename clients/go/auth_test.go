package forge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

// Authentication against the real server started with --auth-token-file
// (or an unreachable --auth-url): Run and GetServerInfo need a bearer
// token, refusals are *RequestRejectedError with the server's ErrorInfo
// reason, and a token's max_runs caps its open runs.

const authTokens = "s3cret name=ci\none max_runs=1\n"

// authServer starts a scripted server accepting the tokens of authTokens.
func authServer(t *testing.T, scripts map[string][]any) *serverProcess {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte(authTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	return ownScriptedServer(t, scripts, "--auth-token-file", file)
}

// dialToken dials srv with forge.WithToken(token).
func dialToken(t *testing.T, srv *serverProcess, token string) (*forge.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, srv.addr, forge.WithToken(token))
	if err == nil {
		t.Cleanup(func() { client.Close() })
	}
	return client, err
}

// bearer sends a token the way forge.WithToken does, for clients that
// must reach Run without forge.Dial's GetServerInfo check.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

// uncheckedClient is a forge.NewClient on a connection that sends token
// (none when empty): unlike forge.Dial, it calls nothing before the test
// does.
func uncheckedClient(t *testing.T, addr, token string) *forge.Client {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(token)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return forge.NewClient(conn)
}

// wantRejected fails unless err is a *RequestRejectedError with code and
// reason (and not a *ConnectionLostError).
func wantRejected(t *testing.T, err error, code codes.Code, reason string, srv *serverProcess) {
	t.Helper()
	var rej *forge.RequestRejectedError
	if !errors.As(err, &rej) {
		log := ""
		if srv != nil {
			log = "\nserver log:\n" + srv.log.String()
		}
		t.Fatalf("err = %v (%T), want *RequestRejectedError %s %s%s", err, err, code, reason, log)
	}
	if rej.Code != code || rej.Reason != reason {
		t.Errorf("rejected with %s %q (%s), want %s %q", rej.Code, rej.Reason, rej.Message, code, reason)
	}
	if errors.As(err, new(*forge.ConnectionLostError)) {
		t.Errorf("%v is also a *ConnectionLostError", err)
	}
	if st, ok := status.FromError(err); !ok || st.Code() != code {
		t.Errorf("status.FromError(err) = %v, %v; want code %s", st, ok, code)
	}
}

func weatherRun() []any {
	return []any{
		toolCall("get_weather", map[string]any{"city": "Paris"}),
		toolCall("report_weather", map[string]any{"city": "Paris", "weather": "sunny"}),
	}
}

// sunny is a get_weather that answers at once and counts its calls.
func sunny(calls *int) func(context.Context, weatherArgs) (string, error) {
	return func(_ context.Context, in weatherArgs) (string, error) {
		*calls++
		return "sunny in " + in.City, nil
	}
}

// wantCompleted fails unless the run completed with the scripted report
// after calling get_weather once.
func wantCompleted(t *testing.T, res *forge.RunResult, err error, calls int, srv *serverProcess) {
	t.Helper()
	if err != nil {
		t.Fatalf("run: %v\nserver log:\n%s", err, srv.log.String())
	}
	if res.TerminalTool != "report_weather" || res.RunID == "" {
		t.Errorf("terminal tool %q, run id %q", res.TerminalTool, res.RunID)
	}
	if want := (report{City: "Paris", Weather: "sunny"}); res.Value != want {
		t.Errorf("value %#v, want %#v", res.Value, want)
	}
	if calls != 1 {
		t.Errorf("get_weather ran %d times, want 1", calls)
	}
}

func TestAuthTokens(t *testing.T) {
	srv := authServer(t, map[string][]any{
		"go_auth":       weatherRun(),
		"go_auth_limit": weatherRun(),
	})
	const question = "What's the weather in Paris?"

	t.Run("a run with the right token completes", func(t *testing.T) {
		client, err := dialToken(t, srv, "s3cret")
		if err != nil {
			t.Fatalf("dial with the token: %v\nserver log:\n%s", err, srv.log.String())
		}
		calls := 0
		res, err := client.Run(context.Background(), weatherWorkflow("go_auth", sunny(&calls)), question)
		wantCompleted(t, res, err, calls, srv)
	})

	t.Run("a run without a token or with a wrong one is rejected UNAUTHENTICATED", func(t *testing.T) {
		for _, token := range []string{"", "wrong"} {
			calls := 0
			client := uncheckedClient(t, srv.addr, token)
			_, err := client.Run(context.Background(), weatherWorkflow("go_auth", sunny(&calls)), question)
			wantRejected(t, err, codes.Unauthenticated, "UNAUTHENTICATED", srv)
			if calls != 0 {
				t.Errorf("token %q: get_weather ran %d times in a rejected run", token, calls)
			}
		}
	})

	t.Run("GetServerInfo needs the token", func(t *testing.T) {
		_, err := uncheckedClient(t, srv.addr, "").ServerInfo(context.Background())
		wantRejected(t, err, codes.Unauthenticated, "UNAUTHENTICATED", srv)
		_, err = uncheckedClient(t, srv.addr, "wrong").ServerInfo(context.Background())
		wantRejected(t, err, codes.Unauthenticated, "UNAUTHENTICATED", srv)
		// Dial checks the server with GetServerInfo, so it is refused too.
		_, err = dialToken(t, srv, "wrong")
		wantRejected(t, err, codes.Unauthenticated, "UNAUTHENTICATED", srv)

		client, err := dialToken(t, srv, "s3cret")
		if err != nil {
			t.Fatalf("dial with the token: %v", err)
		}
		info, err := client.ServerInfo(context.Background())
		if err != nil {
			t.Fatalf("ServerInfo with the token: %v", err)
		}
		if info.GetBackend() != "scripted" || info.GetVersion() == "" {
			t.Errorf("server info %v", info)
		}
	})

	t.Run("a token at its max_runs is rejected TOKEN_RUN_LIMIT until a run ends", func(t *testing.T) {
		client, err := dialToken(t, srv, "one")
		if err != nil {
			t.Fatalf("dial with the token: %v\nserver log:\n%s", err, srv.log.String())
		}
		entered, release := make(chan struct{}), make(chan struct{})
		blocking := weatherWorkflow("go_auth_limit", func(ctx context.Context, in weatherArgs) (string, error) {
			close(entered)
			select {
			case <-release:
				return "sunny in " + in.City, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		first, err := client.Start(ctx, blocking, question)
		if err != nil {
			t.Fatal(err)
		}
		released := false
		defer func() {
			if !released {
				close(release)
			}
		}()
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatalf("the first run never called get_weather\nserver log:\n%s", srv.log.String())
		}

		// The first run is open: a second with the same token is refused
		// before its tools run (its get_weather would return at once).
		calls := 0
		_, err = client.Run(ctx, weatherWorkflow("go_auth_limit", sunny(&calls)), question)
		wantRejected(t, err, codes.ResourceExhausted, "TOKEN_RUN_LIMIT", srv)
		if calls != 0 {
			t.Errorf("get_weather ran %d times in the rejected run", calls)
		}

		// The limit is the token's: another token still runs.
		other, err := dialToken(t, srv, "s3cret")
		if err != nil {
			t.Fatal(err)
		}
		calls = 0
		res, err := other.Run(ctx, weatherWorkflow("go_auth", sunny(&calls)), question)
		wantCompleted(t, res, err, calls, srv)

		close(release)
		released = true
		res, err = first.Wait()
		wantCompleted(t, res, err, 1, srv)

		// Once the first run has ended the token runs again. The server
		// releases the run when its stream closes, just after run_completed.
		deadline := time.Now().Add(10 * time.Second)
		for {
			calls = 0
			res, err = client.Run(ctx, weatherWorkflow("go_auth_limit", sunny(&calls)), question)
			var rej *forge.RequestRejectedError
			if errors.As(err, &rej) && rej.Reason == "TOKEN_RUN_LIMIT" && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			wantCompleted(t, res, err, calls, srv)
			break
		}
	})
}

func TestAuthUnavailableVerifierIsRejectedNotConnectionLost(t *testing.T) {
	// --auth-url at a port nothing listens on: the server answers
	// UNAVAILABLE with the ErrorInfo reason AUTH_UNAVAILABLE.
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := ownScriptedServer(t, map[string][]any{"go_auth_unavailable": weatherRun()},
		"--auth-url", fmt.Sprintf("http://127.0.0.1:%d/verify", port))

	_, err = dialToken(t, srv, "s3cret")
	wantRejected(t, err, codes.Unavailable, "AUTH_UNAVAILABLE", srv)

	calls := 0
	_, err = uncheckedClient(t, srv.addr, "s3cret").Run(context.Background(),
		weatherWorkflow("go_auth_unavailable", sunny(&calls)), "What's the weather in Paris?")
	wantRejected(t, err, codes.Unavailable, "AUTH_UNAVAILABLE", srv)
	if calls != 0 {
		t.Errorf("get_weather ran %d times in a rejected run", calls)
	}
}

// failingConn answers every call with err, as a server (or a proxy) would.
type failingConn struct{ err error }

func (c failingConn) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return c.err
}

func (c failingConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, c.err
}

func TestAuthErrorMappingOfUnavailableAndCancelled(t *testing.T) {
	// An Unavailable or Canceled status is the server's refusal when it
	// carries an ErrorInfo reason, a lost connection when it carries none.
	withDetails := func(code codes.Code, details ...protoadapt.MessageV1) error {
		st, err := status.New(code, "refused").WithDetails(details...)
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	info := func(reason string) *errdetails.ErrorInfo {
		return &errdetails.ErrorInfo{Domain: "forge.v1", Reason: reason}
	}
	retry := &errdetails.RetryInfo{}
	for _, tc := range []struct {
		name   string
		err    error
		reason string // "": want *ConnectionLostError
	}{
		{"UNAVAILABLE AUTH_UNAVAILABLE", withDetails(codes.Unavailable, info("AUTH_UNAVAILABLE")), "AUTH_UNAVAILABLE"},
		{"UNAVAILABLE SHUTTING_DOWN", withDetails(codes.Unavailable, info("SHUTTING_DOWN")), "SHUTTING_DOWN"},
		{"CANCELLED SHUTTING_DOWN", withDetails(codes.Canceled, info("SHUTTING_DOWN")), "SHUTTING_DOWN"},
		{"UNAVAILABLE without details", status.Error(codes.Unavailable, "connection refused"), ""},
		{"CANCELLED without details", status.Error(codes.Canceled, "context canceled"), ""},
		{"UNAVAILABLE without an ErrorInfo", withDetails(codes.Unavailable, retry), ""},
		{"UNAVAILABLE with an ErrorInfo without a reason", withDetails(codes.Unavailable, info("")), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := forge.NewClient(failingConn{tc.err})
			calls := 0
			_, infoErr := client.ServerInfo(context.Background())
			_, startErr := client.Start(context.Background(), weatherWorkflow("go_auth_mapping", sunny(&calls)), "hi")
			for _, err := range []error{infoErr, startErr} {
				if tc.reason != "" {
					wantRejected(t, err, status.Code(tc.err), tc.reason, nil)
					continue
				}
				var lost *forge.ConnectionLostError
				if !errors.As(err, &lost) || !errors.Is(err, tc.err) {
					t.Errorf("err = %v (%T), want *ConnectionLostError wrapping %v", err, err, tc.err)
				}
				if errors.As(err, new(*forge.RequestRejectedError)) {
					t.Errorf("%v is also a *RequestRejectedError", err)
				}
			}
		})
	}
}
