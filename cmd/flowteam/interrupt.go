package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
)

// interruptible returns a context that the first Ctrl-C (SIGINT) cancels: run and
// resume then end as failed with code "cancelled" and still print where they stood.
// The handler is removed before the context is cancelled, so a second Ctrl-C kills
// the process as usual, also when what runs does not heed the cancellation.
// (signal.NotifyContext keeps catching Ctrl-C until its stop function is called, at
// the end of the command.) stop releases the handler.
func interruptible() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-sig:
		case <-done:
		}
		signal.Stop(sig)
		cancel()
	})
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
