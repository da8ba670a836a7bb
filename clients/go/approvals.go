package forge

// A run's approvals: the approver of each destructive call runs in its own
// goroutine and its decision goes back through the run loop (stream.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

// newPending is the context of a tool call or approval: cancelled when the
// run ends or is cancelled, and when the server stops waiting for it.
func (l *runLoop) newPending(name string) *pendingCall {
	callCtx, cancel := context.WithCancelCause(l.toolCtx)
	timed, stopTimer := context.WithTimeoutCause(callCtx, l.s.toolTimeout, ErrToolTimeout)
	return &pendingCall{
		name: name,
		ctx:  timed,
		cancel: func(cause error) {
			cancel(cause)
			stopTimer()
		},
		started: time.Now(),
	}
}

// ask runs the approver of an approval request in its own goroutine; with
// none configured the call is denied.
func (l *runLoop) ask(req *forgev1.ApprovalRequest) {
	args := map[string]any{}
	if err := json.Unmarshal([]byte(req.GetArgumentsJson()), &args); err != nil || args == nil {
		args = map[string]any{}
	}
	ar := ApprovalRequest{
		CallID:    req.GetCallId(),
		ToolName:  req.GetToolName(),
		Arguments: args,
		Iteration: int(req.GetIteration()),
	}
	if decision := l.decisions[ar.CallID]; decision != nil {
		l.send(decision) // asked again after a reattach
		return
	}
	if l.askedFor[ar.CallID] {
		return // the approver is still deciding
	}
	l.askedFor[ar.CallID] = true
	l.emit(ApprovalRequested{ar})
	if l.cancelled {
		// The server is already cancelling; it will not wait for a decision.
		l.emit(ApprovalDecided{CallID: ar.CallID, ToolName: ar.ToolName, Err: ErrRunCancelled, Discarded: true})
		return
	}
	p := l.newPending(ar.ToolName)
	l.asking[ar.CallID] = p
	approver := l.s.approver
	go func() {
		d := approvalDone{callID: ar.CallID, approval: Approval{Reason: noApproverReason}}
		if approver != nil {
			d.approval, d.err = callApprover(p.ctx, approver, ar)
		}
		select {
		case l.decided <- d:
		case <-l.finished:
		}
	}()
}

func callApprover(ctx context.Context, fn Approver, req ApprovalRequest) (a Approval, err error) {
	defer func() {
		if r := recover(); r != nil {
			a, err = Approval{}, fmt.Errorf("the approver of %s panicked: %v", req.ToolName, r)
		}
	}()
	return fn(ctx, req)
}

// approvalDecided sends an approver's decision to the server, unless the
// server no longer waits for it. An error denies the call.
func (l *runLoop) approvalDecided(d approvalDone) {
	p := l.asking[d.callID]
	if p == nil {
		return
	}
	delete(l.asking, d.callID)
	discard := l.cancelled || p.ctx.Err() != nil
	p.cancel(nil)
	a := d.approval
	if d.err != nil {
		a = Approval{Reason: d.err.Error()}
		if a.Reason == "" {
			a.Reason = "the approver failed"
		}
	}
	decision := &forgev1.RunRequest{Kind: &forgev1.RunRequest_Approval{Approval: &forgev1.ApprovalDecision{
		CallId:   d.callID,
		Approved: a.Approved,
		Reason:   a.Reason,
	}}}
	// Kept for the run's lifetime: sent again if the server asks again.
	l.decisions[d.callID] = decision
	if !discard {
		l.send(decision)
	}
	l.emit(ApprovalDecided{
		CallID:    d.callID,
		ToolName:  p.name,
		Approved:  a.Approved,
		Reason:    a.Reason,
		Err:       d.err,
		Discarded: discard,
	})
}
