//go:build !unix

package interceptor_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
