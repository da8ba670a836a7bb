// Command mcporders hands Forge the tools of an MCP server: a small stdio
// MCP server written with github.com/modelcontextprotocol/go-sdk (this same
// binary, started with -serve-mcp) whose three tools become the workflow's
// tools through forge.AddMCPTools, their annotations honoured: cancel_order
// is destructive, so the run asks before each call.
//
// Start the Forge server first (`make run`), then:
//
//	cd examples/go && go run ./mcporders "Cancel order A1, it was a mistake."
//
// The caller owns the MCP session; Forge never connects to the MCP server.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"

	forge "github.com/forge-sidecar/forge/clients/go"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type orderArgs struct {
	OrderID string `json:"order_id" jsonschema:"the order id, e.g. A1"`
}

type noteArgs struct {
	OrderID string `json:"order_id" jsonschema:"the order id, e.g. A1"`
	Note    string `json:"note" jsonschema:"the note to add"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// serveMCP is the MCP server: three tools over stdin/stdout.
func serveMCP(ctx context.Context) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1.0.0"}, nil)
	no := false
	mcp.AddTool(server, &mcp.Tool{Name: "lookup_order", Description: "Look up an order by its id.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in orderArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("order %s: 2 items, shipped", in.OrderID)), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "add_note", Description: "Add a note to an order.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}},
		func(_ context.Context, _ *mcp.CallToolRequest, in noteArgs) (*mcp.CallToolResult, any, error) {
			return text("note added to " + in.OrderID), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "cancel_order", Description: "Cancel an order for good."},
		func(_ context.Context, _ *mcp.CallToolRequest, in orderArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("order %s cancelled", in.OrderID)), nil, nil
		}) // no annotations: MCP's defaults make it destructive
	return server.Run(ctx, &mcp.StdioTransport{})
}

func main() {
	address := flag.String("address", forge.DefaultAddress, "Forge server address")
	token := flag.String("token", "", "the server's bearer token (default: $FORGE_TOKEN)")
	serve := flag.Bool("serve-mcp", false, "run as the MCP server (stdio)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *serve {
		if err := serveMCP(ctx); err != nil {
			log.Fatal(err)
		}
		return
	}
	question := "Where is order A1?"
	if flag.NArg() > 0 {
		question = flag.Arg(0)
	}
	if err := run(ctx, *address, *token, question); err != nil {
		// A refusal (Unauthenticated, a bad workflow) or no server: one line.
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, address, token, question string) error {
	// Start the MCP server (this binary) and connect to it over stdio.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	mcpClient := mcp.NewClient(&mcp.Implementation{Name: "mcporders", Version: "1.0.0"}, nil)
	session, err := mcpClient.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(self, "-serve-mcp")}, nil)
	if err != nil {
		return fmt.Errorf("MCP server: %w", err)
	}
	defer session.Close()

	wf := forge.NewWorkflow("orders", "Answer questions about orders and carry out what the user asks.")
	wf.RespondTool = true
	tools, err := forge.AddMCPTools(ctx, wf, session)
	if err != nil {
		return err
	}
	for _, t := range tools {
		fmt.Printf("MCP tool %s (destructive: %v, read-only: %v)\n", t.Name, t.Destructive, t.ReadOnly)
	}

	var opts []forge.DialOption
	if token != "" {
		opts = append(opts, forge.WithToken(token)) // else Dial reads $FORGE_TOKEN
	}
	client, err := forge.Dial(ctx, address, opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	res, err := client.Run(ctx, wf, question,
		forge.WithApproveDestructiveCalls(),
		forge.WithApprover(func(_ context.Context, req forge.ApprovalRequest) (forge.Approval, error) {
			args, _ := json.Marshal(req.Arguments)
			fmt.Printf("  ?? approving %s(%s)\n", req.ToolName, args)
			return forge.Approval{Approved: true}, nil
		}),
		forge.WithEvents(func(e forge.Event) {
			switch e := e.(type) {
			case forge.ToolCallStarted:
				fmt.Printf("  -> %s(%s)\n", e.ToolName, e.Arguments)
			case forge.MessageAppended:
				if m := e.Message; m.GetTransient() {
					for _, c := range m.GetToolCalls() {
						fmt.Printf("  !! refused call: %s(%s)\n", c.GetName(), c.GetArgumentsJson())
					}
					if m.GetContent() != "" && m.GetRole() != forge.RoleAssistant {
						fmt.Printf("  !! correction: %s\n", m.GetContent())
					}
				}
			}
		}))
	if err != nil {
		return err
	}
	fmt.Println(res.Value)
	return nil
}
