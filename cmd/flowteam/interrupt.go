package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals are the signals that cancel a run: Ctrl-C (SIGINT), and SIGTERM, with
// which Kubernetes, systemd and Docker stop a process. (On Windows only Ctrl-C is
// delivered.)
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// interruptible returns a context that the first SIGINT (Ctrl-C) or SIGTERM cancels:
// run and resume then end as failed with code "cancelled", save the instance where it
// stood (with --store) and print the outcome. The context's cause names the signal.
// The handler is removed before the context is cancelled, so a second signal ends the
// process at once as usual, also when what runs does not heed the cancellation.
// (signal.NotifyContext keeps catching the signals until its stop function is called,
// at the end of the command.) stop releases the handler.
func interruptible() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, stopSignals...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var cause error
		select {
		case s := <-sig:
			cause = signalCause(s)
		case <-done:
		}
		signal.Stop(sig)
		cancel(cause)
	})
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// signalCause is the cancel cause of a run that the signal s stopped.
func signalCause(s os.Signal) error {
	name := s.String()
	switch s {
	case os.Interrupt:
		name = "SIGINT"
	case syscall.SIGTERM:
		name = "SIGTERM"
	}
	return fmt.Errorf("stopped by %s", name)
}
