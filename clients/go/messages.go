package forge

import forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"

// Role is the chat role of a [Message].
type Role = forgev1.Role

// Roles of a [Message].
const (
	RoleSystem    Role = forgev1.Role_ROLE_SYSTEM
	RoleUser      Role = forgev1.Role_ROLE_USER
	RoleAssistant Role = forgev1.Role_ROLE_ASSISTANT
	RoleTool      Role = forgev1.Role_ROLE_TOOL
)

// MessageType says what created a [Message].
type MessageType = forgev1.MessageType

// Message types; see the contract (proto/forge/v1/messages.proto).
const (
	MessageSystemPrompt      MessageType = forgev1.MessageType_MESSAGE_TYPE_SYSTEM_PROMPT
	MessageUserInput         MessageType = forgev1.MessageType_MESSAGE_TYPE_USER_INPUT
	MessageToolCall          MessageType = forgev1.MessageType_MESSAGE_TYPE_TOOL_CALL
	MessageToolResult        MessageType = forgev1.MessageType_MESSAGE_TYPE_TOOL_RESULT
	MessageReasoning         MessageType = forgev1.MessageType_MESSAGE_TYPE_REASONING
	MessageTextResponse      MessageType = forgev1.MessageType_MESSAGE_TYPE_TEXT_RESPONSE
	MessageStepNudge         MessageType = forgev1.MessageType_MESSAGE_TYPE_STEP_NUDGE
	MessagePrerequisiteNudge MessageType = forgev1.MessageType_MESSAGE_TYPE_PREREQUISITE_NUDGE
	MessageRetryNudge        MessageType = forgev1.MessageType_MESSAGE_TYPE_RETRY_NUDGE
	MessageSummary           MessageType = forgev1.MessageType_MESSAGE_TYPE_SUMMARY
)

// Gpu is a GPU the server sees (see [ServerInfo].Gpus).
type Gpu = forgev1.Gpu

// LlamaDevice is a GPU device llama-server can see (see [ServerInfo].LlamaDevices).
type LlamaDevice = forgev1.LlamaDevice

// BackendHealth is one backend of the server's fallback chain with its health
// (see [ServerInfo].Backends; one entry without a chain).
type BackendHealth = forgev1.BackendHealth

// Coercion is a near-miss argument the server fixed before validation, e.g.
// the string "42" for an integer field.
type Coercion = forgev1.Coercion

// Persistent returns the messages of a transcript that a client should keep
// to continue the conversation later: all but the transient retry artefacts
// (failed attempts and nudges).
func Persistent(transcript []*Message) []*Message {
	out := make([]*Message, 0, len(transcript))
	for _, m := range transcript {
		if !m.GetTransient() {
			out = append(out, m)
		}
	}
	return out
}

// withResult returns the final transcript with the terminal result put back
// in its message: the server sends that content once, as RunCompleted.result.
func withResult(m *forgev1.RunCompleted) []*Message {
	transcript := convertAll(m.GetTranscript(), messageFromPb)
	for i := len(transcript) - 1; i >= 0; i-- {
		msg := transcript[i]
		if msg.GetRole() != forgev1.Role_ROLE_TOOL || msg.GetToolCallId() != m.GetTerminalCallId() {
			continue
		}
		if msg.GetContent() == "" {
			filled := *msg
			filled.Content = m.GetResult()
			transcript[i] = &filled
		}
		break
	}
	return transcript
}
