//go:build unix

package interceptor_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process used so far, which, unlike
// the elapsed time, does not grow when other processes compete for the machine.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
