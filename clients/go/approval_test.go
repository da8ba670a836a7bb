package forge_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// approvalWorkflow has one destructive terminal tool and the server's
// respond tool (script testdata/scripts/go_approval.json).
func approvalWorkflow() *forge.Workflow {
	wf := forge.NewWorkflow("go_approval", "Carry out the operation the user asks for on a service.")
	wf.RespondTool = true
	type deleteArgs struct {
		Service  string `json:"service"`
		Replicas int    `json:"replicas,omitempty"`
	}
	forge.AddTool(wf, "delete_service", "Delete a service and its deployment permanently. Ends the task.",
		func(_ context.Context, in deleteArgs) (string, error) { return in.Service + " deleted", nil },
		forge.AsDestructive(), forge.AsTerminal())
	return wf
}

func TestApproverDecidesDestructiveCalls(t *testing.T) {
	client := dial(t)
	wf := approvalWorkflow()
	if !wf.Tool("delete_service").Destructive {
		t.Fatal("AsDestructive did not mark the tool")
	}
	const ask = "Delete the old staging service, we no longer use it."

	// A panicking approver denies the call; the model reads the panic.
	rec := &recorder{}
	res, err := client.Run(context.Background(), wf, ask,
		forge.WithApproveDestructiveCalls(), forge.WithEvents(rec.add),
		forge.WithApprover(func(context.Context, forge.ApprovalRequest) (forge.Approval, error) {
			panic("operator unreachable")
		}))
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminalTool != "respond" {
		t.Errorf("terminal tool %s, want respond", res.TerminalTool)
	}
	var requested []forge.ApprovalRequested
	var decided []forge.ApprovalDecided
	for _, e := range rec.events {
		switch e := e.(type) {
		case forge.ApprovalRequested:
			requested = append(requested, e)
		case forge.ApprovalDecided:
			decided = append(decided, e)
		case forge.ToolCallStarted:
			t.Errorf("a denied call was sent: %+v", e)
		}
	}
	wantArgs := map[string]any{"service": "staging", "replicas": float64(3)}
	if len(requested) != 1 || requested[0].ToolName != "delete_service" || requested[0].CallID == "" ||
		!reflect.DeepEqual(requested[0].Arguments, wantArgs) {
		t.Fatalf("approval requests: %+v", requested)
	}
	if len(decided) != 1 || decided[0].CallID != requested[0].CallID || decided[0].Approved ||
		decided[0].Err == nil || !strings.Contains(decided[0].Reason, "operator unreachable") {
		t.Fatalf("decisions: %+v", decided)
	}
	if text := transcriptText(res.Transcript); !strings.Contains(text, "operator unreachable") {
		t.Errorf("the denial's reason is not in the transcript:\n%s", text)
	}

	// Approved: the tool call follows with the approval's call id.
	var approvalID, callID string
	res, err = client.Run(context.Background(), wf, ask,
		forge.WithApproveDestructiveCalls(),
		forge.WithApprover(func(_ context.Context, req forge.ApprovalRequest) (forge.Approval, error) {
			approvalID = req.CallID
			return forge.Approval{Approved: true}, nil
		}),
		forge.WithEvents(func(e forge.Event) {
			if s, ok := e.(forge.ToolCallStarted); ok {
				callID = s.CallID
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminalTool != "delete_service" || res.Output != "staging deleted" || callID == "" || callID != approvalID {
		t.Errorf("result %s %q; call id %q, approval id %q", res.TerminalTool, res.Output, callID, approvalID)
	}
}

func TestPendingApproverIsCancelledWithTheRun(t *testing.T) {
	client := dial(t)
	causes := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := client.Run(ctx, approvalWorkflow(), "Delete the old staging service, we no longer use it.",
		forge.WithApproveDestructiveCalls(),
		forge.WithApprover(func(ctx context.Context, _ forge.ApprovalRequest) (forge.Approval, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return forge.Approval{}, ctx.Err()
		}),
		forge.WithEvents(func(e forge.Event) {
			if _, ok := e.(forge.ApprovalRequested); ok {
				cancel()
			}
		}))
	if !errors.As(err, new(*forge.WorkflowCancelledError)) {
		t.Fatalf("err = %v (%T), want *WorkflowCancelledError", err, err)
	}
	select {
	case cause := <-causes:
		if !errors.Is(cause, forge.ErrRunCancelled) && !errors.Is(cause, context.Canceled) {
			t.Errorf("approver context cause = %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the approver's context was not cancelled")
	}
}
