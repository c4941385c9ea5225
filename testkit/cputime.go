package testkit

import "testing"

// ReportCPU starts measuring the process's CPU time (garbage collector included) and
// returns a function that reports it as "cpu-ns/op" and, when perOp > 0, as
// "cpu-ns/node" over perOp units per operation. Call it after any setup and defer the
// result: on a loaded machine the elapsed time measures the neighbours as well, the
// CPU time mostly the code.
func ReportCPU(b *testing.B, perOp int) func() {
	start, ok := ProcessCPU()
	return func() {
		end, ok2 := ProcessCPU()
		if !ok || !ok2 || b.N == 0 {
			return
		}
		per := float64(end-start) / float64(b.N)
		b.ReportMetric(per, "cpu-ns/op")
		if perOp > 0 {
			b.ReportMetric(per/float64(perOp), "cpu-ns/node")
		}
	}
}
