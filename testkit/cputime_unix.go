//go:build unix

package testkit

import "syscall"

// ProcessCPU returns the CPU time, user and system, the process has used so far in
// nanoseconds, and whether the platform could tell.
func ProcessCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
