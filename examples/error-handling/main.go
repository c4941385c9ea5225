// Command error-handling shows flowteam's execution-error model on an inventory lookup:
// a soft timeout is recoverable and routes to a fallback lookup, an unavailable
// inventory service is fatal and ends the run with the fallback business state, and a
// legacy integer error code is reported as a string.
//
//	go run ./examples/error-handling
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/flowteam/flowteam/flow"
)

// Business error codes, owned by the order domain, not by the engine.
const (
	CodeInventorySoftTimeout = "ORDER_INVENTORY_SOFT_TIMEOUT"
	CodeInventoryUnavailable = "ORDER_INVENTORY_UNAVAILABLE"
)

// InventoryError is a typed business error: the engine reads its code, type and
// recoverability through small methods, not through its message.
type InventoryError struct {
	Code      string
	Message   string
	Transient bool // worth continuing without: the default policy recovers it
}

// Error returns the message; the code travels separately (ErrorCode).
func (e *InventoryError) Error() string { return e.Message }

// ErrorCode is the code the engine records as the node error's code.
func (e *InventoryError) ErrorCode() string { return e.Code }

// ErrorType is the type of the structured error in the execution error record.
func (e *InventoryError) ErrorType() string { return "inventory_error" }

// Recoverable tells the default error policy whether the run may go on.
func (e *InventoryError) Recoverable() bool { return e.Transient }

// legacyRPCError carries an integer code, as older services do.
type legacyRPCError struct {
	code    int
	message string
}

func (e *legacyRPCError) Error() string { return e.message }
func (e *legacyRPCError) Code() int     { return e.code }

// Scenarios: what the inventory lookup returns.
var Scenarios = map[string]error{
	"soft-timeout": &InventoryError{Code: CodeInventorySoftTimeout, Message: "inventory lookup timed out for sku-1", Transient: true},
	"unavailable":  &InventoryError{Code: CodeInventoryUnavailable, Message: "inventory service is unavailable for sku-1"},
	"legacy":       &legacyRPCError{code: 40401, message: "item not found"},
}

// Graph is the order flow: lookup, then finalize. The lookup declares where a
// recoverable error continues and what business state a fatal one leaves behind.
func Graph() (*flow.Graph, error) {
	s := flow.NewSpec("order")
	s.Start("start").LinkTo("lookup_inventory")
	s.Activity("lookup_inventory").SetTask("@lookup").
		SetMeta(flow.MetaOnError, map[string]any{
			"goto":     "fallback_lookup",
			"fallback": map[string]any{"inventory_status": "fallback"},
		}).
		LinkTo("finalize")
	s.Activity("fallback_lookup").SetTask(`context.put("inventory_status", "estimated")`).LinkTo("finalize")
	s.Activity("finalize").SetTask(`context.put("done", true)`).LinkTo("end")
	s.End("end")
	return s.Build()
}

// Run runs the order flow with the lookup failing as the scenario says.
func Run(ctx context.Context, scenario string) (*flow.Result, *flow.Context, error) {
	lookupErr, ok := Scenarios[scenario]
	if !ok {
		return nil, nil, fmt.Errorf("unknown scenario %q", scenario)
	}
	eng := flow.NewEngine(flow.WithTaskFunc("lookup", func(context.Context, *flow.Context, *flow.Node) error {
		return lookupErr
	}))
	g, err := Graph()
	if err != nil {
		return nil, nil, err
	}
	fc := flow.NewContext("order-" + scenario)
	res, err := eng.EvalGraph(ctx, g, fc)
	if res == nil {
		return nil, nil, err
	}
	return res, fc, nil
}

func main() {
	for _, scenario := range []string{"soft-timeout", "unavailable", "legacy"} {
		res, fc, err := Run(context.Background(), scenario)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out := map[string]any{
			"scenario": scenario,
			"status":   res.Status,
			"state":    fc.Vars(),
			"errors":   res.ExecutionErrors,
		}
		if res.Err != nil {
			out["terminal_error"] = flow.ToStructured(res.Err)
		}
		delete(out["state"].(map[string]any), flow.DefaultErrorKey) // shown under "errors"
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Println(string(b))
	}
}
