// Command parallel asks several suppliers for a price at the same time and picks the
// cheapest offer: a parallel fan-out/fan-in built in Go code with flow.NewSpec and Go
// tasks.
//
//	start -> fork (parallel) -> quote-A, quote-B, quote-C -> join (parallel) -> pick -> end
//
// Each quote task runs on its own goroutine and adds its price to the shared "quotes"
// variable with Context.Update (an atomic read-modify-write), so no quote is lost
// whatever order the branches finish in. The join waits for every branch; pick then
// chooses the lowest price. The fork's branch policy is "continue": a supplier that
// fails is withdrawn from the join instead of failing the run, and pick reports it as
// unavailable.
//
//	go run ./examples/parallel
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/flowteam/flowteam/flow"
)

// Supplier is a simulated price source.
type Supplier struct {
	Name  string
	Price int64         // in cents
	Delay time.Duration // simulated latency
	Err   error         // when set, the supplier fails
}

// Quote returns the supplier's price for item, honouring ctx while it "waits".
func (s Supplier) Quote(ctx context.Context, item string) (int64, error) {
	if s.Delay > 0 {
		t := time.NewTimer(s.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if s.Err != nil {
		return 0, s.Err
	}
	return s.Price, nil
}

// Offer is the outcome: the cheapest quote, every quote received, and the suppliers
// that could not quote.
type Offer struct {
	Supplier    string
	Price       int64
	Quotes      map[string]int64
	Unavailable []string
}

// Variables the graph uses.
const (
	varItem   = "item"
	varQuotes = "quotes" // map[string]int64, supplier -> price
	varBest   = "best"   // Offer
)

// errNoQuote is returned when no supplier quoted.
var errNoQuote = errors.New("no supplier quoted")

// buildGraph builds the fan-out/fan-in graph over the suppliers.
func buildGraph(suppliers []Supplier) (*flow.Graph, error) {
	s := flow.NewSpec("best-price")
	s.Title = "Best price from several suppliers"
	s.Start("start").LinkTo("fork")
	fork := s.Parallel("fork").SetMeta(flow.MetaBranchPolicy, "continue")
	for _, sup := range suppliers {
		id := "quote-" + sup.Name
		fork.LinkTo(id)
		s.Activity(id).SetTitle("ask "+sup.Name).SetMeta("supplier", sup.Name).Do(quoteTask(sup)).LinkTo("join")
	}
	s.Parallel("join").LinkTo("pick")
	s.Activity("pick").SetTitle("pick the cheapest").DoFunc(pickCheapest).LinkTo("end")
	s.End("end")
	return s.Build()
}

// quoteTask asks one supplier and records its price.
func quoteTask(sup Supplier) flow.TaskFunc {
	return func(ctx context.Context, c *flow.Context, _ *flow.Node) error {
		item, _ := c.GetString(varItem)
		price, err := sup.Quote(ctx, item)
		if err != nil {
			return fmt.Errorf("supplier %s: %w", sup.Name, err)
		}
		// Copy on write: a map already handed out by Vars() is never modified.
		c.Update(varQuotes, func(old any, _ bool) any {
			m, _ := old.(map[string]int64)
			next := make(map[string]int64, len(m)+1)
			maps.Copy(next, m)
			next[sup.Name] = price
			return next
		})
		return nil
	}
}

// pickCheapest runs after the join: every branch has either quoted or been withdrawn.
func pickCheapest(_ context.Context, c *flow.Context, n *flow.Node) error {
	quotes, _ := flow.GetAs[map[string]int64](c, varQuotes)
	best := Offer{Quotes: quotes}
	failures, _ := flow.GetAs[[]flow.BranchFailure](c, flow.KeyBranchFailures)
	for _, f := range failures {
		best.Unavailable = append(best.Unavailable, n.Graph().Node(f.Node).MetaString("supplier"))
	}
	slices.Sort(best.Unavailable)
	if len(quotes) == 0 {
		return errNoQuote
	}
	// Sorted names make ties deterministic: the first name wins.
	for _, name := range slices.Sorted(maps.Keys(quotes)) {
		if best.Supplier == "" || quotes[name] < best.Price {
			best.Supplier, best.Price = name, quotes[name]
		}
	}
	c.Set(varBest, best)
	return nil
}

// bestPrice runs the graph for item.
func bestPrice(ctx context.Context, eng *flow.Engine, g *flow.Graph, item string) (Offer, error) {
	fc := flow.NewContextWith("quote-"+item, map[string]any{varItem: item})
	res, err := eng.EvalGraph(ctx, g, fc)
	if errors.Is(err, flow.ErrAllBranchesFailed) {
		// Every supplier failed: the split fails rather than letting the run complete
		// without an offer.
		return Offer{}, fmt.Errorf("%w: %d of %d suppliers failed: %w", errNoQuote, len(res.BranchFailures), len(g.Node("fork").Links()), err)
	}
	if err != nil {
		return Offer{}, err
	}
	best, _ := flow.GetAs[Offer](fc, varBest)
	return best, nil
}

// suppliers returns the demo suppliers; latency scales their simulated delays.
func suppliers(latency time.Duration) []Supplier {
	return []Supplier{
		{Name: "A", Price: 1200, Delay: 3 * latency},
		{Name: "B", Price: 950, Delay: 2 * latency},
		{Name: "C", Price: 1010, Delay: 1 * latency},
	}
}

// run asks the suppliers for a price of item and prints the offer to w.
func run(ctx context.Context, w io.Writer, sups []Supplier, item string) error {
	g, err := buildGraph(sups)
	if err != nil {
		return err
	}
	eng := flow.NewEngine(flow.WithMaxConcurrency(8))
	began := time.Now()
	best, err := bestPrice(ctx, eng, g, item)
	if err != nil {
		return err
	}
	elapsed := time.Since(began)
	for _, name := range slices.SortedFunc(maps.Keys(best.Quotes), func(a, b string) int {
		return cmp.Or(cmp.Compare(best.Quotes[a], best.Quotes[b]), cmp.Compare(a, b))
	}) {
		fmt.Fprintf(w, "%s quotes %s\n", name, money(best.Quotes[name]))
	}
	for _, name := range best.Unavailable {
		fmt.Fprintf(w, "%s is unavailable\n", name)
	}
	fmt.Fprintf(w, "cheapest %s: %s at %s (asked %d suppliers in %s)\n",
		item, best.Supplier, money(best.Price), len(sups), elapsed.Round(time.Millisecond))
	return nil
}

func money(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

func main() {
	if err := run(context.Background(), os.Stdout, suppliers(20*time.Millisecond), "widget"); err != nil {
		fmt.Fprintln(os.Stderr, "parallel:", err)
		os.Exit(1)
	}
}
