package trace_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowteam/flowteam/trace"
)

// An audit file is JSON Lines, one trace.Record per line. A root graph's records leave
// "path" out (it equals "graph"); decoding puts it back. Records then answer questions
// about the runs: which nodes ran, how each ended, and whether the file is consistent.
func ExampleRecords() {
	const file = `{"seq":1,"time":"2026-11-30T09:00:00Z","status":"STARTED","graph":"leave","instance":"leave-42","run":"r1"}
{"seq":2,"time":"2026-11-30T09:00:00Z","status":"STARTED","graph":"leave","node":"manager","type":"activity","instance":"leave-42","run":"r1","branch":"main"}
{"seq":3,"time":"2026-11-30T09:00:01Z","status":"SUSPENDED","graph":"leave","node":"manager","type":"activity","instance":"leave-42","run":"r1","branch":"main","step":1,"duration_ns":1000,"reason":"waiting for the manager"}
{"seq":4,"time":"2026-11-30T09:00:01Z","status":"SUSPENDED","graph":"leave","instance":"leave-42","run":"r1","duration_ns":2000,"reason":"waiting for the manager"}`
	var recs trace.Records
	sc := bufio.NewScanner(strings.NewReader(file))
	for sc.Scan() {
		var r trace.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Println(err)
			return
		}
		recs = append(recs, r)
	}
	fmt.Println("path of a root record:", recs[1].Path)
	for _, r := range recs.Nodes().Terminal() {
		fmt.Println(r.NodeID, r.Status, r.Reason)
	}
	m := recs.Metrics("r1")
	fmt.Println("run:", m.Status, m.Started, m.Suspended)
	fmt.Println("consistent:", recs.Verify() == nil)
	fmt.Println("cut after its second line:")
	fmt.Println(recs[:2].Verify())
	// Output:
	// path of a root record: leave
	// manager SUSPENDED waiting for the manager
	// run: SUSPENDED 1 1
	// consistent: true
	// cut after its second line:
	// run r1: does not end with a terminal run record
	// run r1: has 1 run records, want 2
	// run r1: leave:manager (seq 2) started in branch "main" and never ended
}
