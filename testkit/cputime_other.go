//go:build !unix

package testkit

// ProcessCPU returns the CPU time the process has used so far; on this platform it
// cannot tell.
func ProcessCPU() (int64, bool) { return 0, false }
