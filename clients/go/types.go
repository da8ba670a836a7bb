package forge

// The SDK's own types for what the contract's messages carry (a Message, a
// run's Usage, ServerInfo), with the contract's field names and nil-safe
// getters, so code written against the generated types reads the same.
// TestSDKTypesHaveTheContractsFields checks that every field of the
// generated type is here.

import forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"

// Message is one message of a run's conversation, as the server keeps it. Persist the non-transient ones (see [RunResult.Conversation]) and pass them back with [WithPriorMessages] to continue a conversation.
type Message struct {
	Role       Role
	Content    string
	Type       MessageType
	StepIndex  *uint32
	ToolCalls  []*ToolCall
	ToolCallId string
	ToolName   string
	Transient  bool
}

// GetRole returns Role (its zero value on a nil Message).
func (x *Message) GetRole() Role {
	if x == nil {
		return 0
	}
	return x.Role
}

// GetContent returns Content (its zero value on a nil Message).
func (x *Message) GetContent() string {
	if x == nil {
		return ""
	}
	return x.Content
}

// GetType returns Type (its zero value on a nil Message).
func (x *Message) GetType() MessageType {
	if x == nil {
		return 0
	}
	return x.Type
}

// GetStepIndex returns StepIndex (its zero value on a nil Message).
func (x *Message) GetStepIndex() *uint32 {
	if x == nil {
		return nil
	}
	return x.StepIndex
}

// GetToolCalls returns ToolCalls (its zero value on a nil Message).
func (x *Message) GetToolCalls() []*ToolCall {
	if x == nil {
		return nil
	}
	return x.ToolCalls
}

// GetToolCallId returns ToolCallId (its zero value on a nil Message).
func (x *Message) GetToolCallId() string {
	if x == nil {
		return ""
	}
	return x.ToolCallId
}

// GetToolName returns ToolName (its zero value on a nil Message).
func (x *Message) GetToolName() string {
	if x == nil {
		return ""
	}
	return x.ToolName
}

// GetTransient returns Transient (its zero value on a nil Message).
func (x *Message) GetTransient() bool {
	if x == nil {
		return false
	}
	return x.Transient
}

func messageFromPb(m *forgev1.Message) *Message {
	if m == nil {
		return nil
	}
	return &Message{
		Role:       m.GetRole(),
		Content:    m.GetContent(),
		Type:       m.GetType(),
		StepIndex:  m.StepIndex,
		ToolCalls:  convertAll(m.GetToolCalls(), toolCallFromPb),
		ToolCallId: m.GetToolCallId(),
		ToolName:   m.GetToolName(),
		Transient:  m.GetTransient(),
	}
}

func messageToPb(m *Message) *forgev1.Message {
	if m == nil {
		return nil
	}
	return &forgev1.Message{
		Role:       m.Role,
		Content:    m.Content,
		Type:       m.Type,
		StepIndex:  m.StepIndex,
		ToolCalls:  convertAll(m.ToolCalls, toolCallToPb),
		ToolCallId: m.ToolCallId,
		ToolName:   m.ToolName,
		Transient:  m.Transient,
	}
}

// ToolCall is one tool invocation inside an assistant message.
type ToolCall struct {
	Id            string
	Name          string
	ArgumentsJson string
}

// GetId returns Id (its zero value on a nil ToolCall).
func (x *ToolCall) GetId() string {
	if x == nil {
		return ""
	}
	return x.Id
}

// GetName returns Name (its zero value on a nil ToolCall).
func (x *ToolCall) GetName() string {
	if x == nil {
		return ""
	}
	return x.Name
}

// GetArgumentsJson returns ArgumentsJson (its zero value on a nil ToolCall).
func (x *ToolCall) GetArgumentsJson() string {
	if x == nil {
		return ""
	}
	return x.ArgumentsJson
}

func toolCallFromPb(m *forgev1.ToolCall) *ToolCall {
	if m == nil {
		return nil
	}
	return &ToolCall{
		Id:            m.GetId(),
		Name:          m.GetName(),
		ArgumentsJson: m.GetArgumentsJson(),
	}
}

func toolCallToPb(m *ToolCall) *forgev1.ToolCall {
	if m == nil {
		return nil
	}
	return &forgev1.ToolCall{
		Id:            m.Id,
		Name:          m.Name,
		ArgumentsJson: m.ArgumentsJson,
	}
}

// Usage is the token and time accounting of a run, summed from the backend's own reports.
type Usage struct {
	ModelCalls         uint32
	PromptTokens       uint64
	CompletionTokens   uint64
	CachedPromptTokens uint64
	PromptMs           float64
	GenerationMs       float64
	CacheHitRatio      float64
	Iterations         []*IterationUsage
}

// GetModelCalls returns ModelCalls (its zero value on a nil Usage).
func (x *Usage) GetModelCalls() uint32 {
	if x == nil {
		return 0
	}
	return x.ModelCalls
}

// GetPromptTokens returns PromptTokens (its zero value on a nil Usage).
func (x *Usage) GetPromptTokens() uint64 {
	if x == nil {
		return 0
	}
	return x.PromptTokens
}

// GetCompletionTokens returns CompletionTokens (its zero value on a nil Usage).
func (x *Usage) GetCompletionTokens() uint64 {
	if x == nil {
		return 0
	}
	return x.CompletionTokens
}

// GetCachedPromptTokens returns CachedPromptTokens (its zero value on a nil Usage).
func (x *Usage) GetCachedPromptTokens() uint64 {
	if x == nil {
		return 0
	}
	return x.CachedPromptTokens
}

// GetPromptMs returns PromptMs (its zero value on a nil Usage).
func (x *Usage) GetPromptMs() float64 {
	if x == nil {
		return 0
	}
	return x.PromptMs
}

// GetGenerationMs returns GenerationMs (its zero value on a nil Usage).
func (x *Usage) GetGenerationMs() float64 {
	if x == nil {
		return 0
	}
	return x.GenerationMs
}

// GetCacheHitRatio returns CacheHitRatio (its zero value on a nil Usage).
func (x *Usage) GetCacheHitRatio() float64 {
	if x == nil {
		return 0
	}
	return x.CacheHitRatio
}

// GetIterations returns Iterations (its zero value on a nil Usage).
func (x *Usage) GetIterations() []*IterationUsage {
	if x == nil {
		return nil
	}
	return x.Iterations
}

func usageFromPb(m *forgev1.Usage) *Usage {
	if m == nil {
		return nil
	}
	return &Usage{
		ModelCalls:         m.GetModelCalls(),
		PromptTokens:       m.GetPromptTokens(),
		CompletionTokens:   m.GetCompletionTokens(),
		CachedPromptTokens: m.GetCachedPromptTokens(),
		PromptMs:           m.GetPromptMs(),
		GenerationMs:       m.GetGenerationMs(),
		CacheHitRatio:      m.GetCacheHitRatio(),
		Iterations:         convertAll(m.GetIterations(), iterationUsageFromPb),
	}
}

// IterationUsage is one model call's accounting (see [Usage].Iterations).
type IterationUsage struct {
	Iteration          uint32
	PromptTokens       uint32
	CachedPromptTokens uint32
	CacheHitRatio      float64
	PromptMs           float64
	GenerationMs       float64
	Slot               int32
	Backend            string
}

// GetIteration returns Iteration (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetIteration() uint32 {
	if x == nil {
		return 0
	}
	return x.Iteration
}

// GetPromptTokens returns PromptTokens (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetPromptTokens() uint32 {
	if x == nil {
		return 0
	}
	return x.PromptTokens
}

// GetCachedPromptTokens returns CachedPromptTokens (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetCachedPromptTokens() uint32 {
	if x == nil {
		return 0
	}
	return x.CachedPromptTokens
}

// GetCacheHitRatio returns CacheHitRatio (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetCacheHitRatio() float64 {
	if x == nil {
		return 0
	}
	return x.CacheHitRatio
}

// GetPromptMs returns PromptMs (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetPromptMs() float64 {
	if x == nil {
		return 0
	}
	return x.PromptMs
}

// GetGenerationMs returns GenerationMs (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetGenerationMs() float64 {
	if x == nil {
		return 0
	}
	return x.GenerationMs
}

// GetSlot returns Slot (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetSlot() int32 {
	if x == nil {
		return 0
	}
	return x.Slot
}

// GetBackend returns Backend (its zero value on a nil IterationUsage).
func (x *IterationUsage) GetBackend() string {
	if x == nil {
		return ""
	}
	return x.Backend
}

func iterationUsageFromPb(m *forgev1.IterationUsage) *IterationUsage {
	if m == nil {
		return nil
	}
	return &IterationUsage{
		Iteration:          m.GetIteration(),
		PromptTokens:       m.GetPromptTokens(),
		CachedPromptTokens: m.GetCachedPromptTokens(),
		CacheHitRatio:      m.GetCacheHitRatio(),
		PromptMs:           m.GetPromptMs(),
		GenerationMs:       m.GetGenerationMs(),
		Slot:               m.GetSlot(),
		Backend:            m.GetBackend(),
	}
}

// ServerInfo is what a server runs on (see [Client.ServerInfo]).
type ServerInfo struct {
	Version             string
	Backend             string
	Model               string
	ContextBudgetTokens uint32
	BudgetMode          string
	Slots               uint32
	BackendMode         string
	BackendUrl          string
	ToolCallMode        string
	ActiveRuns          uint32
	KvCacheType         string
	BudgetSource        string
	Gpus                []*Gpu
	GpuStatus           string
	QueuedRuns          uint32
	Backends            []*BackendHealth
	LlamaDevice         string
	LlamaDevices        []*LlamaDevice
}

// GetVersion returns Version (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetVersion() string {
	if x == nil {
		return ""
	}
	return x.Version
}

// GetBackend returns Backend (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetBackend() string {
	if x == nil {
		return ""
	}
	return x.Backend
}

// GetModel returns Model (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetModel() string {
	if x == nil {
		return ""
	}
	return x.Model
}

// GetContextBudgetTokens returns ContextBudgetTokens (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetContextBudgetTokens() uint32 {
	if x == nil {
		return 0
	}
	return x.ContextBudgetTokens
}

// GetBudgetMode returns BudgetMode (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetBudgetMode() string {
	if x == nil {
		return ""
	}
	return x.BudgetMode
}

// GetSlots returns Slots (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetSlots() uint32 {
	if x == nil {
		return 0
	}
	return x.Slots
}

// GetBackendMode returns BackendMode (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetBackendMode() string {
	if x == nil {
		return ""
	}
	return x.BackendMode
}

// GetBackendUrl returns BackendUrl (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetBackendUrl() string {
	if x == nil {
		return ""
	}
	return x.BackendUrl
}

// GetToolCallMode returns ToolCallMode (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetToolCallMode() string {
	if x == nil {
		return ""
	}
	return x.ToolCallMode
}

// GetActiveRuns returns ActiveRuns (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetActiveRuns() uint32 {
	if x == nil {
		return 0
	}
	return x.ActiveRuns
}

// GetKvCacheType returns KvCacheType (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetKvCacheType() string {
	if x == nil {
		return ""
	}
	return x.KvCacheType
}

// GetBudgetSource returns BudgetSource (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetBudgetSource() string {
	if x == nil {
		return ""
	}
	return x.BudgetSource
}

// GetGpus returns Gpus (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetGpus() []*Gpu {
	if x == nil {
		return nil
	}
	return x.Gpus
}

// GetGpuStatus returns GpuStatus (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetGpuStatus() string {
	if x == nil {
		return ""
	}
	return x.GpuStatus
}

// GetQueuedRuns returns QueuedRuns (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetQueuedRuns() uint32 {
	if x == nil {
		return 0
	}
	return x.QueuedRuns
}

// GetBackends returns Backends (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetBackends() []*BackendHealth {
	if x == nil {
		return nil
	}
	return x.Backends
}

// GetLlamaDevice returns LlamaDevice (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetLlamaDevice() string {
	if x == nil {
		return ""
	}
	return x.LlamaDevice
}

// GetLlamaDevices returns LlamaDevices (its zero value on a nil ServerInfo).
func (x *ServerInfo) GetLlamaDevices() []*LlamaDevice {
	if x == nil {
		return nil
	}
	return x.LlamaDevices
}

func serverInfoFromPb(m *forgev1.GetServerInfoResponse) *ServerInfo {
	if m == nil {
		return nil
	}
	return &ServerInfo{
		Version:             m.GetVersion(),
		Backend:             m.GetBackend(),
		Model:               m.GetModel(),
		ContextBudgetTokens: m.GetContextBudgetTokens(),
		BudgetMode:          m.GetBudgetMode(),
		Slots:               m.GetSlots(),
		BackendMode:         m.GetBackendMode(),
		BackendUrl:          m.GetBackendUrl(),
		ToolCallMode:        m.GetToolCallMode(),
		ActiveRuns:          m.GetActiveRuns(),
		KvCacheType:         m.GetKvCacheType(),
		BudgetSource:        m.GetBudgetSource(),
		Gpus:                m.GetGpus(),
		GpuStatus:           m.GetGpuStatus(),
		QueuedRuns:          m.GetQueuedRuns(),
		Backends:            m.GetBackends(),
		LlamaDevice:         m.GetLlamaDevice(),
		LlamaDevices:        m.GetLlamaDevices(),
	}
}

// convertAll converts every element of in (nil stays nil).
func convertAll[In, Out any](in []In, convert func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, v := range in {
		out[i] = convert(v)
	}
	return out
}
