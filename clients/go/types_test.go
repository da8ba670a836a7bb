package forge

import (
	"reflect"
	"testing"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

// The SDK's own Message, ToolCall, Usage, IterationUsage and ServerInfo
// have every exported field of the contract's generated type, under the same
// name, so a field the contract adds fails here until the SDK type has it.
func TestSDKTypesHaveTheContractsFields(t *testing.T) {
	pairs := []struct{ sdk, pb any }{
		{Message{}, forgev1.Message{}},
		{ToolCall{}, forgev1.ToolCall{}},
		{Usage{}, forgev1.Usage{}},
		{IterationUsage{}, forgev1.IterationUsage{}},
		{ServerInfo{}, forgev1.GetServerInfoResponse{}},
	}
	for _, p := range pairs {
		sdk, pb := reflect.TypeOf(p.sdk), reflect.TypeOf(p.pb)
		for i := range pb.NumField() {
			f := pb.Field(i)
			if !f.IsExported() {
				continue
			}
			if _, ok := sdk.FieldByName(f.Name); !ok {
				t.Errorf("%s has no field %s (%s.%s)", sdk.Name(), f.Name, pb.Name(), f.Name)
			}
		}
	}
}

// A message converts to the contract and back unchanged, tool calls and the
// optional step index included.
func TestMessageRoundTripsThroughTheContract(t *testing.T) {
	step := uint32(2)
	m := &Message{
		Role: RoleAssistant, Type: MessageToolCall, Content: "calling", StepIndex: &step,
		ToolCalls:  []*ToolCall{{Id: "call_9", Name: "find_invoice", ArgumentsJson: `{"number":"INV-9"}`}},
		ToolCallId: "", ToolName: "", Transient: true,
	}
	back := messageFromPb(messageToPb(m))
	if !reflect.DeepEqual(back, m) {
		t.Errorf("round trip: %+v, want %+v", back, m)
	}
	var none *Message
	if none.GetContent() != "" || none.GetToolCalls() != nil || messageToPb(nil) != nil {
		t.Error("a nil Message is not read as empty")
	}
	u := usageFromPb(&forgev1.Usage{ModelCalls: 2, Iterations: []*forgev1.IterationUsage{{Iteration: 1, Backend: "scripted"}}})
	if u.GetModelCalls() != 2 || len(u.Iterations) != 1 || u.Iterations[0].GetBackend() != "scripted" {
		t.Errorf("usage %+v", u)
	}
}
