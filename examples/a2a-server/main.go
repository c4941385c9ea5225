// Command a2a-server serves two flowteam agents over A2A (JSON-RPC, streaming):
// the editorial desk of examples/team-supervisor, a supervisor team, at /desk/, and
// a patent agent whose database is down at /patents/, whose tasks fail with a
// structured error (error_type source_unavailable, error_code PATENT_DB_DOWN).
//
//	go run ./examples/a2a-server -addr 127.0.0.1:8090
//	go run ./examples/a2a-client -url http://127.0.0.1:8090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/flowteam/flowteam/examples/a2a-server/remote"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err == nil {
		err = serve(ctx, ln, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2a-server:", err)
		os.Exit(1)
	}
}

// serve serves the agents on ln until ctx ends.
func serve(ctx context.Context, ln net.Listener, out io.Writer) error {
	base := "http://" + ln.Addr().String()
	agents := remote.New(base)
	defer agents.Close()
	hs := &http.Server{Handler: agents.Handler()}
	go func() {
		<-ctx.Done()
		agents.Close() // runs in flight end, so their requests do
		_ = hs.Shutdown(context.WithoutCancel(ctx))
	}()
	fmt.Fprintf(out, "serving %s%s and %s%s\n", base, remote.DeskPath, base, remote.PatentsPath)
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
