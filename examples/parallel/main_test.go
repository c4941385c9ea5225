package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowteam/flowteam/flow"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, suppliers(0), "widget"))
	assert.Regexp(t, `^B quotes 9.50
C quotes 10.10
A quotes 12.00
cheapest widget: B at 9.50 \(asked 3 suppliers in [^)]+\)
$`, out.String())
}

func TestBestPrice(t *testing.T) {
	g, err := buildGraph(suppliers(0))
	require.NoError(t, err)
	eng := flow.NewEngine()
	// The branches finish in whatever order the scheduler picks; every run must see all
	// three quotes and the same winner.
	for range 50 {
		best, err := bestPrice(context.Background(), eng, g, "widget")
		require.NoError(t, err)
		assert.Equal(t, Offer{Supplier: "B", Price: 950, Quotes: map[string]int64{"A": 1200, "B": 950, "C": 1010}}, best)
	}
}

func TestBestPriceSupplierDown(t *testing.T) {
	sups := suppliers(0)
	sups[1].Err = errors.New("connection refused") // B, the cheapest, is down
	g, err := buildGraph(sups)
	require.NoError(t, err)
	best, err := bestPrice(context.Background(), flow.NewEngine(), g, "widget")
	require.NoError(t, err)
	assert.Equal(t, Offer{Supplier: "C", Price: 1010, Quotes: map[string]int64{"A": 1200, "C": 1010}, Unavailable: []string{"B"}}, best)

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, sups, "widget"))
	assert.Contains(t, out.String(), "B is unavailable\ncheapest widget: C at 10.10")
}

func TestBestPriceAllDown(t *testing.T) {
	sups := suppliers(0)
	for i := range sups {
		sups[i].Err = errors.New("offline")
	}
	g, err := buildGraph(sups)
	require.NoError(t, err)
	// With every branch failed the split itself fails, so the caller learns that
	// nobody quoted and why.
	_, err = bestPrice(context.Background(), flow.NewEngine(), g, "widget")
	require.ErrorIs(t, err, errNoQuote)
	require.ErrorIs(t, err, flow.ErrAllBranchesFailed)
}

func TestBestPriceCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sups := suppliers(1) // any delay: Quote waits on ctx, which is already done
	g, err := buildGraph(sups)
	require.NoError(t, err)
	_, err = bestPrice(ctx, flow.NewEngine(), g, "widget")
	require.ErrorIs(t, err, context.Canceled)
}
