package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

func TestEncodeOutput(t *testing.T) {
	var nilMap map[string]int
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"plain text", "plain text"},
		{nil, ""},
		{nilMap, ""},
		{42, "42"},
		{map[string]string{"a": "<b>"}, `{"a":"<b>"}`},
		{struct {
			City string `json:"city"`
		}{"Paris"}, `{"city":"Paris"}`},
	} {
		got, err := encodeOutput(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("encodeOutput(%#v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := encodeOutput(func() {}); err == nil {
		t.Error("a func encoded without error")
	}
}

func TestToolErrorKinds(t *testing.T) {
	hard := forgev1.ToolErrorKind_TOOL_ERROR_KIND_HARD
	for _, tc := range []struct {
		err      error
		kind     forgev1.ToolErrorKind
		typeName string
	}{
		{errors.New("boom"), hard, ""},
		{fmt.Errorf("wrapped: %w", errors.New("boom")), hard, ""},
		{&fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}, hard, "fs.PathError"},
		{fmt.Errorf("lookup: %w", Resolutionf("no city %q", "X")), forgev1.ToolErrorKind_TOOL_ERROR_KIND_RESOLUTION, "ToolResolutionError"},
		// The deprecated name still works.
		{&ResolutionError{Msg: "no city"}, forgev1.ToolErrorKind_TOOL_ERROR_KIND_RESOLUTION, "ToolResolutionError"},
		{fmt.Errorf("fetch: %w", Unreachablef("lost the connection: %w", io.ErrUnexpectedEOF)), forgev1.ToolErrorKind_TOOL_ERROR_KIND_UNREACHABLE, "ToolUnreachableError"},
		{&ToolUnreachableError{Msg: "timed out"}, forgev1.ToolErrorKind_TOOL_ERROR_KIND_UNREACHABLE, "ToolUnreachableError"},
		{&ArgumentError{Tool: "t", Err: errors.New("bad")}, hard, "ArgumentError"},
		{&PanicError{Tool: "t", Value: "oops"}, hard, "panic"},
	} {
		got := toolError(tc.err)
		if got.GetKind() != tc.kind || got.GetType() != tc.typeName || got.GetMessage() != tc.err.Error() {
			t.Errorf("toolError(%v) = %v", tc.err, got)
		}
	}
}

func TestUnreachablefWrapsItsCause(t *testing.T) {
	err := fmt.Errorf("tool: %w", Unreachablef("MCP tool %q lost its connection: %w", "x", io.ErrUnexpectedEOF))
	var unr *ToolUnreachableError
	if !errors.As(err, &unr) || unr.Msg != `MCP tool "x" lost its connection: unexpected EOF` {
		t.Fatalf("errors.As = %v (%#v)", errors.As(err, &unr), unr)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("the cause is not found by errors.Is")
	}
	if e := Unreachablef("no cause"); errors.Unwrap(e) != nil {
		t.Errorf("Unwrap = %v, want nil", errors.Unwrap(e))
	}
}

func TestToolSpecCarriesReadOnlyAndIdempotent(t *testing.T) {
	w := NewWorkflow("w", "")
	noop := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	AddSchemaTool(w, "get", "", nil, noop, AsReadOnly())
	AddSchemaTool(w, "put", "", nil, noop, AsIdempotent())
	AddSchemaTool(w, "post", "", nil, noop)
	want := map[string][2]bool{"get": {true, false}, "put": {false, true}, "post": {false, false}}
	for _, spec := range w.proto().GetTools() {
		if got := [2]bool{spec.GetReadOnly(), spec.GetIdempotent()}; got != want[spec.GetName()] {
			t.Errorf("%s: read_only, idempotent = %v, want %v", spec.GetName(), got, want[spec.GetName()])
		}
	}
}
