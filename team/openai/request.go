package openai

import (
	"encoding/json"
	"fmt"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/flowteam/flowteam/team"
)

// params builds the SDK's request from a team request.
func (m *Model) params(req *team.ChatRequest, stream bool) (oai.ChatCompletionNewParams, error) {
	o := req.Options
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(m.model)}
	if o.Model != "" {
		p.Model = shared.ChatModel(o.Model)
	}
	for _, msg := range req.Messages {
		u, err := message(msg)
		if err != nil {
			return p, err
		}
		p.Messages = append(p.Messages, u)
	}
	for _, t := range req.Tools {
		tool, err := toolDef(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	switch o.ToolChoice {
	case "":
	case "auto", "none", "required":
		p.ToolChoice.OfAuto = param.NewOpt(o.ToolChoice)
	default:
		p.ToolChoice = oai.ToolChoiceOptionFunctionToolChoice(oai.ChatCompletionNamedToolChoiceFunctionParam{Name: o.ToolChoice})
	}
	if o.Temperature != nil {
		p.Temperature = param.NewOpt(*o.Temperature)
	}
	if o.TopP != nil {
		p.TopP = param.NewOpt(*o.TopP)
	}
	if o.MaxTokens > 0 {
		p.MaxTokens = param.NewOpt(int64(o.MaxTokens))
	}
	if len(o.Stop) > 0 {
		p.Stop.OfStringArray = o.Stop
	}
	if stream {
		p.StreamOptions.IncludeUsage = param.NewOpt(true)
	}
	if len(o.Extra) > 0 {
		p.SetExtraFields(o.Extra)
	}
	return p, nil
}

// message converts one message of the conversation.
func message(m team.Message) (oai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case team.RoleSystem:
		return oai.SystemMessage(m.Content), nil
	case team.RoleUser:
		return oai.UserMessage(m.Content), nil
	case team.RoleTool:
		return oai.ToolMessage(m.Content, m.ToolCallID), nil
	case team.RoleAssistant:
		a := oai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Args)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{ID: tc.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args}},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return oai.ChatCompletionMessageParamUnion{}, team.NewError(team.TypeInvalidQuery, "message role %q is not system, user, assistant or tool", m.Role)
}

// toolDef converts a tool definition; its schema goes as JSON Schema parameters.
func toolDef(t team.ToolDef) (oai.ChatCompletionToolUnionParam, error) {
	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if t.Parameters != nil {
		data, err := json.Marshal(t.Parameters)
		if err == nil {
			params = nil
			err = json.Unmarshal(data, &params)
		}
		if err != nil {
			return oai.ChatCompletionToolUnionParam{}, &team.Error{Type: team.TypeInvalidQuery,
				Message: fmt.Sprintf("tool %q: parameters: %v", t.Name, err), Err: err}
		}
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		def.Description = param.NewOpt(t.Description)
	}
	return oai.ChatCompletionFunctionTool(def), nil
}
