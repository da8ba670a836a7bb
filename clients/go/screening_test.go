package forge_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// Secrets in tool outputs: the workflow's policy travels to the server, the
// model's view is screened, and the SDK surfaces ToolOutputScreened.

const leakyWeather = "sunny; admin password=hunter2-prod"

func runLeaky(t *testing.T, name string, policy forge.SecretsPolicy) ([]forge.ToolOutputScreened, *forge.RunResult) {
	t.Helper()
	srv := ownScriptedServer(t, map[string][]any{
		name: {
			toolCall("get_weather", map[string]any{"city": "Paris"}),
			toolCall("report_weather", map[string]any{"city": "Paris", "weather": "sunny"}),
		},
	})
	client := dialServer(t, srv)
	wf := weatherWorkflow(name, func(context.Context, weatherArgs) (string, error) {
		return leakyWeather, nil
	})
	wf.ToolOutputSecrets = policy
	var screened []forge.ToolOutputScreened
	res, err := client.Run(context.Background(), wf, "Weather in Paris?",
		forge.WithEvents(func(e forge.Event) {
			if s, ok := e.(forge.ToolOutputScreened); ok {
				screened = append(screened, s)
			}
		}))
	if err != nil {
		t.Fatalf("run: %v\nserver log:\n%s", err, srv.log.String())
	}
	return screened, res
}

func TestRedactedToolOutputIsReportedAndNeverStreamed(t *testing.T) {
	screened, res := runLeaky(t, "go_secrets_redact", forge.SecretsRedact)
	if len(screened) != 1 {
		t.Fatalf("%d ToolOutputScreened events, want 1", len(screened))
	}
	s := screened[0]
	if s.ToolName != "get_weather" || s.Action != forge.SecretsRedact || s.Secrets != 1 {
		t.Errorf("event %+v", s)
	}
	if !slices.Equal(s.SecretTypes, []string{"Secret Keyword"}) {
		t.Errorf("secret types %v", s.SecretTypes)
	}
	text := transcriptText(res.Transcript)
	if strings.Contains(text, "hunter2-prod") {
		t.Error("the secret reached the transcript the model saw")
	}
	if !strings.Contains(text, "[REDACTED: Secret Keyword]") {
		t.Error("no redaction marker in the transcript")
	}
}

func TestBlockedToolOutputIsWithheld(t *testing.T) {
	screened, res := runLeaky(t, "go_secrets_block", forge.SecretsBlock)
	if len(screened) != 1 || screened[0].Action != forge.SecretsBlock {
		t.Fatalf("events %+v, want one block", screened)
	}
	if text := transcriptText(res.Transcript); strings.Contains(text, "sunny; admin") || !strings.Contains(text, "withheld") {
		t.Errorf("transcript does not show the output withheld:\n%s", text)
	}
}

func TestUnspecifiedPolicyLeavesTheServerDefault(t *testing.T) {
	screened, res := runLeaky(t, "go_secrets_default", "")
	if len(screened) != 0 {
		t.Fatalf("events %+v under the server's default (allow)", screened)
	}
	if !strings.Contains(transcriptText(res.Transcript), "hunter2-prod") {
		t.Error("allow: the output should pass unchanged")
	}
}
