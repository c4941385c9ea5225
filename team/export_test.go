package team

// ParseObservation lets the external tests read the observations models were sent.
var ParseObservation = parseObservation

// ToolCallsKey lets the external tests write tool-call records as RecordToolCalls does.
var ToolCallsKey = toolCallsKey
