package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reattaching a run whose stream broke (the contract's ReattachRun): see
// [WithReattach].

// errAttemptTimeout: a reattach attempt got no answer in time.
var errAttemptTimeout = errors.New("no answer to the reattach")

// canReattach: a break of the run's stream may be mended by a reattach.
// Before run_started was read the server's grace is unknown; the run is
// reattached by the id the client chose for it.
func (l *runLoop) canReattach() bool {
	if l.s.reattach.off || l.cancelled {
		return false
	}
	if !l.started {
		return l.startID != ""
	}
	return l.reattachID() != "" && l.grace > 0
}

// reattachID is the id to reattach the run by.
func (l *runLoop) reattachID() string {
	if l.runID != "" {
		return l.runID
	}
	return l.startID
}

// startReattach begins reattaching after the current stream ended with err,
// when the run is reattachable and err is a break rather than a refusal; it
// reports whether it did.
func (l *runLoop) startReattach(err error) bool {
	if !l.canReattach() || !streamBroke(err) {
		return false
	}
	if !l.started && refusedWith(err, "") {
		// A status with a reason before run_started (e.g. UNAVAILABLE
		// AUTH_UNAVAILABLE or SHUTTING_DOWN) is the server's refusal of
		// the start, not a break: it has no run to reattach to.
		return false
	}
	limit := l.grace
	if d := l.s.reattach.deadline; d > 0 && d < limit {
		limit = d
	}
	prestart := !l.started
	if prestart {
		// One deadline for every break until run_started is read: a start
		// sent again whose stream breaks again does not extend it.
		if l.prestartUntil.IsZero() {
			limit = prestartReattach
			if d := l.s.reattach.deadline; d > 0 && d < limit {
				limit = d
			}
			l.prestartUntil = time.Now().Add(limit)
		}
		limit = time.Until(l.prestartUntil)
	}
	// The broken stream is over: cancelling it tells the server (were it
	// still there) that this is a break, not a half-close.
	l.stopStream()
	l.stream, l.stopStream = nil, nil
	l.gen++
	l.broke = err
	ctx, stop := context.WithCancel(l.base)
	l.stopReattach = stop
	go l.reattach(ctx, l.gen, l.reattachID(), l.lastSeq, err, limit, prestart)
	return true
}

// attach makes a reattached stream the current one.
func (l *runLoop) attach(r reattached) {
	l.stopReattach()
	l.stopReattach = nil
	l.stream, l.stopStream = r.stream, r.stop
	go l.receive(l.gen, r.stream)
}

// lostWhileReattaching is the error of a run cancelled (cause) while it had
// no stream.
func (l *runLoop) lostWhileReattaching(cause error) error {
	return &ConnectionLostError{Err: &reattachError{
		runID:  l.reattachID(),
		broke:  l.broke,
		last:   cause,
		reason: "the run was cancelled while reattaching",
	}}
}

// reattach opens streams until one takes the run over, or gives up, and
// hands the outcome to the loop. prestart: the stream broke before
// run_started was read.
func (l *runLoop) reattach(ctx context.Context, gen int, runID string, afterSeq uint64, broke error, limit time.Duration, prestart bool) {
	r := l.tryReattach(ctx, runID, afterSeq, broke, limit, prestart)
	r.gen, r.afterSeq = gen, afterSeq
	select {
	case l.reattached <- r:
	case <-l.finished:
		if r.stop != nil {
			r.stop()
		}
	}
}

func (l *runLoop) tryReattach(ctx context.Context, runID string, afterSeq uint64, broke error, limit time.Duration, prestart bool) reattached {
	cfg := l.s.reattach
	deadline := time.Now().Add(limit)
	delay := cfg.backoffMin
	attempts := 0
	// restart: the server does not know the run, send the start again.
	restart := false
	var last error
	for {
		// Jittered: anywhere between half and all of the delay.
		wait := delay/2 + rand.N(delay/2+1)
		remaining := time.Until(deadline)
		if remaining < cfg.backoffMin/2 {
			break
		}
		if wait > remaining {
			// A last attempt or two, leaving each time to answer.
			wait = remaining / 2
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return reattached{err: context.Cause(ctx)}
		case <-timer.C:
		}
		attempts++
		var r reattached
		var err error
		if restart {
			r, err = l.attemptStart()
		} else {
			r, err = l.attemptReattach(runID, afterSeq, deadline)
		}
		if err != nil && prestart && !restart && refusedWith(err, "RUN_NOT_FOUND") {
			// The start never arrived (or its run ended unseen): start it
			// anew. No tool ran: none is sent before run_started.
			restart = true
			r, err = l.attemptStart()
		}
		if err == nil {
			r.attempts = attempts
			return r
		}
		last = err
		if !reattachRetryable(err) {
			return reattached{err: &ConnectionLostError{Err: &reattachError{
				runID:  runID,
				broke:  broke,
				last:   refusal(err),
				reason: "the server refused the reattach",
			}}}
		}
		delay = min(2*delay, cfg.backoffMax)
	}
	reason := fmt.Sprintf("no reattach within %s (%d attempts)", limit, attempts)
	return reattached{err: &ConnectionLostError{Err: &reattachError{
		runID:  runID,
		broke:  broke,
		last:   last,
		reason: reason,
	}}}
}

// attemptReattach opens a stream, sends reattach and waits for the server's
// first answer.
func (l *runLoop) attemptReattach(runID string, afterSeq uint64, deadline time.Time) (reattached, error) {
	ctx, stop := context.WithCancel(l.base)
	limit := min(time.Until(deadline), reattachAttemptTimeout)
	timer := time.AfterFunc(limit, stop)
	var first *forgev1.RunResponse
	stream, err := l.s.rpc.Run(ctx)
	if err == nil {
		// A failed send means the stream is gone; Recv reports why.
		_ = stream.Send(&forgev1.RunRequest{Kind: &forgev1.RunRequest_Reattach{Reattach: &forgev1.ReattachRun{
			RunId:    runID,
			AfterSeq: afterSeq,
		}}})
		first, err = stream.Recv()
	}
	if !timer.Stop() {
		stop()
		return reattached{}, errAttemptTimeout
	}
	if err != nil {
		stop()
		return reattached{}, err
	}
	return reattached{stream: stream, stop: stop, first: first}, nil
}

// attemptStart opens a stream and sends the run's start on it again (its
// run_started comes as on the first stream).
func (l *runLoop) attemptStart() (reattached, error) {
	ctx, stop := context.WithCancel(l.base)
	stream, err := l.s.rpc.Run(ctx)
	if err != nil {
		stop()
		return reattached{}, err
	}
	// A failed send means the stream is gone; Recv reports why (and that
	// break is reattached again).
	_ = stream.Send(&forgev1.RunRequest{Kind: &forgev1.RunRequest_Start{Start: l.start}})
	return reattached{stream: stream, stop: stop}, nil
}

// refusedWith: err is the server's refusal with reason (any reason when
// reason is "").
func refusedWith(err error, reason string) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	got := errorReason(st)
	return got != "" && (reason == "" || got == reason)
}

// streamBroke tells a broken stream (a lost connection, a stream that ended
// before the run did, a draining server handing its runs over with
// UNAVAILABLE SHUTTING_DOWN) from the server's refusal of something the
// client sent.
func streamBroke(err error) bool {
	if errors.Is(err, io.EOF) {
		return true
	}
	st, ok := status.FromError(err)
	if !ok {
		return true
	}
	switch st.Code() {
	case codes.Unavailable:
		return true
	case codes.Canceled, codes.Internal:
		return errorReason(st) == ""
	}
	return false
}

// reattachRetryable: a failed attempt that may succeed later (the server is
// down, restarting or draining, another replica still holds the run:
// RUN_BUSY). RUN_NOT_FOUND, NOT_RUN_OWNER, a closed client and other
// refusals are final.
func reattachRetryable(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, errAttemptTimeout) {
		return true
	}
	st, ok := status.FromError(err)
	if !ok {
		return true
	}
	switch st.Code() {
	case codes.Unavailable:
		return true
	case codes.ResourceExhausted:
		return errorReason(st) == "SERVER_BUSY"
	case codes.Internal:
		return errorReason(st) == ""
	}
	return false
}

// refusal is err as a [*RequestRejectedError] when the server refused with a
// reason, else err itself.
func refusal(err error) error {
	var rej *RequestRejectedError
	if errors.As(rpcError(err), &rej) {
		return rej
	}
	return err
}

// reattachError is what a [*ConnectionLostError] wraps when reattaching
// gave up: the break, and why no reattach followed (the last attempt's
// error, or the run's cancellation). errors.Is and errors.As see both.
type reattachError struct {
	runID  string
	broke  error
	last   error
	reason string
}

func (e *reattachError) Error() string {
	broke := "the server closed the stream before the run ended"
	if e.broke != nil && !errors.Is(e.broke, io.EOF) {
		broke = e.broke.Error()
	}
	msg := fmt.Sprintf("%s; reattaching run %s: %s", broke, e.runID, e.reason)
	if e.last != nil {
		msg += ": " + e.last.Error()
	}
	return msg
}

func (e *reattachError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.broke, e.last} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// errorReason is the ErrorInfo reason of a status ("" when it has none).
func errorReason(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}
