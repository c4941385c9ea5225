package subagent

// ToolCallsKey lets the external tests write tool-call records as RecordToolCalls does.
var ToolCallsKey = toolCallsKey
