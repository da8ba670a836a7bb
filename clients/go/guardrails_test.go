package forge

import (
	"testing"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

// Each Guardrails switch reaches its own RunOptions.guardrails field.
func TestWithGuardrailsSetsTheChoiceSwitches(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Guardrails
		want func(*forgev1.Guardrails) bool
	}{
		{"result binding", Guardrails{DisableResultBinding: true}, func(g *forgev1.Guardrails) bool {
			return g.GetDisableResultBinding() && !g.GetDisableNumberBounds()
		}},
		{"number bounds", Guardrails{DisableNumberBounds: true}, func(g *forgev1.Guardrails) bool {
			return g.GetDisableNumberBounds() && !g.GetDisableResultBinding()
		}},
		{"grounding", Guardrails{DisableGrounding: true}, func(g *forgev1.Guardrails) bool {
			return g.GetDisableGrounding() && !g.GetDisableResultBinding()
		}},
	} {
		c := &runConfig{options: &forgev1.RunOptions{}}
		WithGuardrails(tc.in)(c)
		if !tc.want(c.options.GetGuardrails()) {
			t.Errorf("%s: guardrails = %v", tc.name, c.options.GetGuardrails())
		}
	}
}
