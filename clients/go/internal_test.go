package forge

import (
	"errors"
	"fmt"
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
		{&ArgumentError{Tool: "t", Err: errors.New("bad")}, hard, "ArgumentError"},
		{&PanicError{Tool: "t", Value: "oops"}, hard, "panic"},
	} {
		got := toolError(tc.err)
		if got.GetKind() != tc.kind || got.GetType() != tc.typeName || got.GetMessage() != tc.err.Error() {
			t.Errorf("toolError(%v) = %v", tc.err, got)
		}
	}
}
