package forge_test

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// Every error the SDK returns about a run or its server is a ForgeError
// (as in Python and TypeScript); errors raised by tool functions are not.
func TestForgeErrorCoversTheSDKsErrors(t *testing.T) {
	runFailed := &forge.RunFailedError{Reason: forge.ReasonStepEnforcement, Message: "pending steps"}
	sdkErrors := []error{
		runFailed,
		&forge.StepEnforcementError{RunFailedError: runFailed},
		&forge.RequestRejectedError{Code: codes.InvalidArgument, Reason: "INVALID_REQUEST", Field: "user_message"},
		&forge.ConnectionLostError{},
	}
	for _, err := range sdkErrors {
		var fe forge.ForgeError
		if !errors.As(fmt.Errorf("wrapped: %w", err), &fe) {
			t.Errorf("%T is no forge.ForgeError", err)
		}
	}
	var fe forge.ForgeError
	if errors.As(forge.Resolutionf("no invoice %s", "INV-1"), &fe) {
		t.Error("a tool's ToolResolutionError counts as a forge.ForgeError")
	}
}
